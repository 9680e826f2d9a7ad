// A31: a frontend interceptor (after the auth interceptor) that records a person's requests under their IdP
// identity: the `identity` of SignalWorkflowExecution and of UpdateWorkflowExecution's meta is replaced by
// <prefix><sub>@<issuer>, whatever the client sent, so the workflow history (which ApiPay reads to attribute a
// resolution, A4) names the person who signed in. Service identities keep the identity they send.
package main

import (
	"context"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/server/common/authorization"
	"google.golang.org/grpc"
)

// IdentityInterceptor stamps the person's identity; prefix as in Settings.IdentityPrefix.
func IdentityInterceptor(prefix string) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		claims, _ := ctx.Value(authorization.MappedClaims).(*authorization.Claims)
		if claims != nil {
			if p, ok := claims.Extensions.(*Person); ok && p != nil {
				stamp(req, p.Identity(prefix))
			}
		}
		return handler(ctx, req)
	}
}

func stamp(req any, identity string) {
	switch r := req.(type) {
	case *workflowservice.SignalWorkflowExecutionRequest:
		r.Identity = identity
	case *workflowservice.UpdateWorkflowExecutionRequest:
		if r.Request != nil && r.Request.Meta != nil {
			r.Request.Meta.Identity = identity
		}
	case *workflowservice.PollWorkflowExecutionUpdateRequest:
		r.Identity = identity
	}
}
