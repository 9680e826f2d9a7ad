// A31: the authorizer of ApiPay's Temporal server. ApiPay's service identities (and the server's own internal
// frontend) may do everything; people from the IdP may signal, update, query, describe, list and read histories on
// ApiPay's namespaces, never start, signal-with-start, terminate, reset, cancel, delete or act as a worker; viewers
// only read. Every other call is denied (the table below is the whole of what people may do).
package main

import (
	"context"
	"strings"

	"go.temporal.io/server/common/authorization"
)

const (
	workflowService = "/temporal.api.workflowservice.v1.WorkflowService/"
	operatorService = "/temporal.api.operatorservice.v1.OperatorService/"
)

// Namespace reads any viewer may call on ApiPay's namespaces (the Temporal UI's workflow pages use these).
var viewerNamespaceAPIs = set(
	workflowService+"DescribeNamespace",
	workflowService+"DescribeWorkflowExecution",
	workflowService+"ListWorkflowExecutions",
	workflowService+"ListOpenWorkflowExecutions",
	workflowService+"ListClosedWorkflowExecutions",
	workflowService+"ListArchivedWorkflowExecutions",
	workflowService+"ScanWorkflowExecutions",
	workflowService+"CountWorkflowExecutions",
	workflowService+"GetWorkflowExecutionHistory",
	workflowService+"GetWorkflowExecutionHistoryReverse",
	workflowService+"GetSearchAttributes",
	workflowService+"DescribeTaskQueue",
	workflowService+"ListSchedules",
	workflowService+"DescribeSchedule",
	workflowService+"ListBatchOperations",
	workflowService+"DescribeBatchOperation",
	operatorService+"ListSearchAttributes",
)

// Cluster-level reads a signed-in person's client needs (the UI's namespace picker and settings).
var viewerClusterAPIs = set(
	workflowService+"ListNamespaces",
	workflowService+"GetClusterInfo",
)

// What operators add: talk to running workflows, never change their lifecycle.
var operatorNamespaceAPIs = set(
	workflowService+"SignalWorkflowExecution",
	workflowService+"UpdateWorkflowExecution",
	workflowService+"PollWorkflowExecutionUpdate",
	workflowService+"QueryWorkflow",
)

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// Authorizer decides by the kind of caller the claim mapper found (see claims.go).
type Authorizer struct {
	namespaces map[string]bool
}

var _ authorization.Authorizer = (*Authorizer)(nil)

// NewAuthorizer allows people only on `namespaces`.
func NewAuthorizer(namespaces []string) *Authorizer {
	return &Authorizer{namespaces: set(namespaces...)}
}

var (
	allow = authorization.Result{Decision: authorization.DecisionAllow}
	deny  = func(reason string) authorization.Result {
		return authorization.Result{Decision: authorization.DecisionDeny, Reason: reason}
	}
)

// Authorize: health checks for anyone; system admins (service tokens, the internal frontend) everything; people
// by the tables above; nobody else anything.
func (a *Authorizer) Authorize(_ context.Context, claims *authorization.Claims, target *authorization.CallTarget) (authorization.Result, error) {
	if authorization.IsHealthCheckAPI(target.APIName) {
		return allow, nil
	}
	if claims == nil {
		return deny("a bearer token from the organisation's identity provider is required"), nil
	}
	if claims.System&authorization.RoleAdmin != 0 {
		return allow, nil
	}
	person, _ := claims.Extensions.(*Person)
	if person == nil || person.Role == RoleNone {
		return deny("the token's groups grant no Temporal access"), nil
	}
	if viewerClusterAPIs[target.APIName] {
		return allow, nil
	}
	if !a.namespaces[target.Namespace] {
		return deny("people may only act on ApiPay's namespaces"), nil
	}
	if viewerNamespaceAPIs[target.APIName] {
		return allow, nil
	}
	if operatorNamespaceAPIs[target.APIName] {
		if person.Role == RoleOperator {
			return allow, nil
		}
		return deny("viewers only read"), nil
	}
	return deny(strings.TrimPrefix(target.APIName[strings.LastIndex(target.APIName, "/")+1:], "/") +
		" is reserved to ApiPay's service identities"), nil
}
