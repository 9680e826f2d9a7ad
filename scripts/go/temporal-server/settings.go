// A31: the settings of ApiPay's Temporal server authorization, read once from the environment at start
// (scripts/stack/temporal-server.sh sets them from the stack's IdP; production sets them for the organisation's IdP).
// Nothing here is specific to one IdP: an issuer URL, its discovery document's JWKS, an audience, a groups claim.
package main

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// Settings says whose tokens the frontend accepts and what each kind of caller may do.
type Settings struct {
	Issuer         string        // exact `iss` of accepted tokens; its discovery document names the JWKS
	JWKSURL        string        // optional: the JWKS address when the issuer has no discovery document
	Audience       string        // required `aud` entry (the Temporal API's own audience)
	GroupsClaim    string        // claim holding the person's IdP groups
	OperatorGroups []string      // groups that may signal, update, query, describe and list
	ViewerGroups   []string      // groups that may only read
	ServiceClients []string      // client ids (`azp`/`client_id`) of ApiPay's own processes: everything
	Namespaces     []string      // the namespaces people may touch (ApiPay's)
	JWKSRefresh    time.Duration // periodic refresh; an unknown key id also refetches (at most every 10 s)
	AllowedSkew    time.Duration // clock skew accepted on exp/nbf/iat
	IdentityPrefix string        // a person's Temporal identity: <prefix><sub>@<issuer>
}

func list(v string) []string {
	out := []string{}
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func envOr(get func(string) string, key, def string) string {
	if v := strings.TrimSpace(get(key)); v != "" {
		return v
	}
	return def
}

// LoadSettings reads TEMPORAL_AUTH_*; ok is false when TEMPORAL_AUTH_ISSUER is unset (no authorization asked).
func LoadSettings(get func(string) string) (s Settings, ok bool, err error) {
	s.Issuer = strings.TrimSpace(get("TEMPORAL_AUTH_ISSUER"))
	if s.Issuer == "" {
		return s, false, nil
	}
	s.JWKSURL = strings.TrimSpace(get("TEMPORAL_AUTH_JWKS_URL"))
	s.Audience = envOr(get, "TEMPORAL_AUTH_AUDIENCE", "apipay-temporal")
	s.GroupsClaim = envOr(get, "TEMPORAL_AUTH_GROUPS_CLAIM", "groups")
	s.OperatorGroups = list(envOr(get, "TEMPORAL_AUTH_OPERATOR_GROUPS", "operator,admin,finance-approver"))
	s.ViewerGroups = list(envOr(get, "TEMPORAL_AUTH_VIEWER_GROUPS", "viewer"))
	s.ServiceClients = list(get("TEMPORAL_AUTH_SERVICE_CLIENTS"))
	s.Namespaces = list(envOr(get, "TEMPORAL_AUTH_NAMESPACES", "default"))
	s.IdentityPrefix = envOr(get, "TEMPORAL_AUTH_IDENTITY_PREFIX", "idp:")
	if s.JWKSRefresh, err = time.ParseDuration(envOr(get, "TEMPORAL_AUTH_JWKS_REFRESH", "10m")); err != nil {
		return s, true, fmt.Errorf("TEMPORAL_AUTH_JWKS_REFRESH: %w", err)
	}
	if s.AllowedSkew, err = time.ParseDuration(envOr(get, "TEMPORAL_AUTH_CLOCK_SKEW", "30s")); err != nil {
		return s, true, fmt.Errorf("TEMPORAL_AUTH_CLOCK_SKEW: %w", err)
	}
	if len(s.ServiceClients) == 0 {
		return s, true, fmt.Errorf("TEMPORAL_AUTH_SERVICE_CLIENTS: name the client ids of ApiPay's own processes")
	}
	return s, true, nil
}

// LoadSettingsFromEnv is LoadSettings over the process environment.
func LoadSettingsFromEnv() (Settings, bool, error) { return LoadSettings(os.Getenv) }
