// A31: the authorizer's whole table, caller kind x API (go test).
package main

import (
	"context"
	"testing"

	"go.temporal.io/server/common/authorization"
)

func caller(kind string) *authorization.Claims {
	switch kind {
	case "none":
		return nil
	case "service":
		return &authorization.Claims{Subject: "service:apipay-temporal-service", System: authorization.RoleAdmin}
	case "operator":
		return &authorization.Claims{Subject: "idp:o", Extensions: &Person{Subject: "o", Role: RoleOperator}}
	case "viewer":
		return &authorization.Claims{Subject: "idp:v", Extensions: &Person{Subject: "v", Role: RoleViewer}}
	case "nogroup":
		return &authorization.Claims{Subject: "idp:m", Extensions: &Person{Subject: "m", Role: RoleNone}}
	case "system-ish": // a claims value with roles but no person and no system admin
		return &authorization.Claims{Subject: "x", System: authorization.RoleWriter, Namespaces: map[string]authorization.Role{"default": authorization.RoleAdmin}}
	}
	panic(kind)
}

func TestAuthorizerTable(t *testing.T) {
	a := NewAuthorizer([]string{"default"})
	wf := func(m string) string { return workflowService + m }
	// Per API: who is allowed (service is always allowed; "none" never, except health checks).
	type row struct {
		api              string
		operator, viewer bool
		health           bool
	}
	rows := []row{
		{wf("GetSystemInfo"), true, true, true},
		{"/grpc.health.v1.Health/Check", true, true, true},
		{wf("SignalWorkflowExecution"), true, false, false},
		{wf("UpdateWorkflowExecution"), true, false, false},
		{wf("PollWorkflowExecutionUpdate"), true, false, false},
		{wf("QueryWorkflow"), true, false, false},
		{wf("DescribeWorkflowExecution"), true, true, false},
		{wf("ListWorkflowExecutions"), true, true, false},
		{wf("CountWorkflowExecutions"), true, true, false},
		{wf("GetWorkflowExecutionHistory"), true, true, false},
		{wf("GetWorkflowExecutionHistoryReverse"), true, true, false},
		{wf("DescribeNamespace"), true, true, false},
		{wf("ListNamespaces"), true, true, false},
		{wf("StartWorkflowExecution"), false, false, false},
		{wf("SignalWithStartWorkflowExecution"), false, false, false},
		{wf("ExecuteMultiOperation"), false, false, false},
		{wf("TerminateWorkflowExecution"), false, false, false},
		{wf("ResetWorkflowExecution"), false, false, false},
		{wf("RequestCancelWorkflowExecution"), false, false, false},
		{wf("DeleteWorkflowExecution"), false, false, false},
		{wf("StartBatchOperation"), false, false, false},
		{wf("UpdateWorkflowExecutionOptions"), false, false, false},
		{wf("PollWorkflowTaskQueue"), false, false, false},
		{wf("RespondWorkflowTaskCompleted"), false, false, false},
		{wf("PollActivityTaskQueue"), false, false, false},
		{wf("RespondActivityTaskCompleted"), false, false, false},
		{wf("CreateSchedule"), false, false, false},
		{wf("RegisterNamespace"), false, false, false},
		{wf("UpdateNamespace"), false, false, false},
		{operatorService + "AddSearchAttributes", false, false, false},
		{operatorService + "DeleteNamespace", false, false, false},
		{"/temporal.server.api.adminservice.v1.AdminService/DescribeCluster", false, false, false},
	}
	for _, r := range rows {
		want := map[string]bool{"service": true, "operator": r.operator, "viewer": r.viewer, "none": r.health,
			"nogroup": r.health, "system-ish": r.health}
		for kind, ok := range want {
			res, err := a.Authorize(context.Background(), caller(kind), &authorization.CallTarget{APIName: r.api, Namespace: "default"})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Decision == authorization.DecisionAllow; got != ok {
				t.Errorf("%s by %s: allowed=%v, want %v (%s)", r.api, kind, got, ok, res.Reason)
			}
		}
	}
}

func TestPeopleOnlyOnApiPaysNamespaces(t *testing.T) {
	a := NewAuthorizer([]string{"default"})
	for _, kind := range []string{"operator", "viewer"} {
		for _, api := range []string{"SignalWorkflowExecution", "DescribeWorkflowExecution", "ListWorkflowExecutions"} {
			res, _ := a.Authorize(context.Background(), caller(kind), &authorization.CallTarget{APIName: workflowService + api, Namespace: "other"})
			if res.Decision == authorization.DecisionAllow {
				t.Errorf("%s allowed %s on another namespace", kind, api)
			}
		}
	}
	res, _ := a.Authorize(context.Background(), caller("service"), &authorization.CallTarget{APIName: workflowService + "StartWorkflowExecution", Namespace: "other"})
	if res.Decision != authorization.DecisionAllow {
		t.Error("a service identity is refused on another namespace")
	}
}

func TestDenialSaysWhy(t *testing.T) {
	res, _ := NewAuthorizer([]string{"default"}).Authorize(context.Background(), caller("operator"),
		&authorization.CallTarget{APIName: workflowService + "TerminateWorkflowExecution", Namespace: "default"})
	if res.Decision != authorization.DecisionDeny || res.Reason != "TerminateWorkflowExecution is reserved to ApiPay's service identities" {
		t.Fatalf("got %+v", res)
	}
}
