// A31: a person's signal and update are recorded under their IdP identity, whatever identity the client sent.
package main

import (
	"context"
	"testing"

	updatepb "go.temporal.io/api/update/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/server/common/authorization"
	"google.golang.org/grpc"
)

func TestIdentityStamp(t *testing.T) {
	icp := IdentityInterceptor("idp:")
	person := &authorization.Claims{Extensions: &Person{Subject: "u-1", Issuer: "http://idp.test/realms/apipay", Role: RoleOperator}}
	service := &authorization.Claims{System: authorization.RoleAdmin}
	call := func(c *authorization.Claims, req any) {
		ctx := context.WithValue(context.Background(), authorization.MappedClaims, c)
		_, _ = icp(ctx, req, &grpc.UnaryServerInfo{}, func(context.Context, any) (any, error) { return nil, nil })
	}
	sig := &workflowservice.SignalWorkflowExecutionRequest{Identity: "temporal:someone-else"}
	call(person, sig)
	if sig.Identity != "idp:u-1@http://idp.test/realms/apipay" {
		t.Fatalf("signal identity %q", sig.Identity)
	}
	upd := &workflowservice.UpdateWorkflowExecutionRequest{Request: &updatepb.Request{Meta: &updatepb.Meta{Identity: "forged"}}}
	call(person, upd)
	if upd.Request.Meta.Identity != "idp:u-1@http://idp.test/realms/apipay" {
		t.Fatalf("update identity %q", upd.Request.Meta.Identity)
	}
	own := &workflowservice.SignalWorkflowExecutionRequest{Identity: "apipay-worker@host"}
	call(service, own)
	if own.Identity != "apipay-worker@host" {
		t.Fatalf("service identity changed to %q", own.Identity)
	}
}
