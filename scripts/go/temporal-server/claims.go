// A31: the claim mapper of ApiPay's Temporal server. A bearer JWT from the configured issuer (signature by its
// JWKS, asymmetric algorithms only, exact `iss`, the Temporal audience in `aud`, `exp` required, `nbf`/`iat` honoured)
// becomes either a service identity (its client id is one of ApiPay's service clients: system admin) or a person
// (subject, name, e-mail and groups; operator or viewer by group). No token, a bad token: no claims (denied).
package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v4"
	"go.temporal.io/server/common/authorization"
)

// Role of a person on ApiPay's namespaces.
type Role int

const (
	RoleNone Role = iota
	RoleViewer
	RoleOperator
)

// Person is the IdP person behind a token (Claims.Extensions); identity.go stamps it on their requests.
type Person struct {
	Subject, Issuer, Name, Email string
	Groups                       []string
	Role                         Role
}

// Identity is what Temporal records as the person's identity: <prefix><sub>@<issuer>.
func (p *Person) Identity(prefix string) string { return prefix + p.Subject + "@" + p.Issuer }

// ClaimMapper verifies tokens against one issuer.
type ClaimMapper struct {
	s    Settings
	keys interface {
		Key(kid, alg string) (any, error)
	}
	now func() time.Time
}

var _ authorization.ClaimMapper = (*ClaimMapper)(nil)

var asymmetric = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512"}

// NewClaimMapper over the settings' issuer.
func NewClaimMapper(s Settings) *ClaimMapper {
	return &ClaimMapper{s: s, keys: NewKeySet(s.Issuer, s.JWKSURL, s.JWKSRefresh), now: time.Now}
}

var errNoToken = errors.New("no bearer token")

// GetClaims is called by the frontend's auth interceptor with the `authorization` header.
func (m *ClaimMapper) GetClaims(info *authorization.AuthInfo) (*authorization.Claims, error) {
	scheme, token, found := strings.Cut(strings.TrimSpace(info.AuthToken), " ")
	if !found || !strings.EqualFold(scheme, "bearer") || token == "" {
		return nil, errNoToken
	}
	c, err := m.verify(strings.TrimSpace(token))
	if err != nil {
		return nil, err
	}
	sub, _ := c["sub"].(string)
	if sub == "" {
		return nil, errors.New("the token has no subject")
	}
	client := str(c, "azp")
	if client == "" {
		client = str(c, "client_id")
	}
	if client != "" && slices.Contains(m.s.ServiceClients, client) {
		return &authorization.Claims{Subject: "service:" + client, System: authorization.RoleAdmin}, nil
	}
	p := &Person{Subject: sub, Issuer: m.s.Issuer, Name: str(c, "name"), Email: str(c, "email"), Groups: groups(c[m.s.GroupsClaim])}
	p.Role = m.role(p.Groups)
	claims := &authorization.Claims{Subject: p.Identity(m.s.IdentityPrefix), Extensions: p}
	if p.Role != RoleNone {
		r := authorization.RoleReader
		if p.Role == RoleOperator {
			r = authorization.RoleWriter
		}
		claims.Namespaces = map[string]authorization.Role{}
		for _, ns := range m.s.Namespaces {
			claims.Namespaces[ns] = r
		}
	}
	return claims, nil
}

func (m *ClaimMapper) role(gs []string) Role {
	for _, g := range gs {
		if slices.Contains(m.s.OperatorGroups, g) {
			return RoleOperator
		}
	}
	for _, g := range gs {
		if slices.Contains(m.s.ViewerGroups, g) {
			return RoleViewer
		}
	}
	return RoleNone
}

func (m *ClaimMapper) verify(token string) (jwt.MapClaims, error) {
	parser := jwt.NewParser(jwt.WithValidMethods(asymmetric), jwt.WithoutClaimsValidation())
	parsed, err := parser.Parse(token, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		alg, _ := t.Header["alg"].(string)
		return m.keys.Key(kid, alg)
	})
	if err != nil {
		return nil, err
	}
	c, ok := parsed.Claims.(jwt.MapClaims)
	if !ok {
		return nil, errors.New("the token has no claims")
	}
	if str(c, "iss") != m.s.Issuer {
		return nil, fmt.Errorf("issuer %q is not %q", str(c, "iss"), m.s.Issuer)
	}
	if !c.VerifyAudience(m.s.Audience, true) {
		return nil, fmt.Errorf("audience is not %q", m.s.Audience)
	}
	now, skew := m.now(), m.s.AllowedSkew
	if !c.VerifyExpiresAt(now.Add(-skew).Unix(), true) {
		return nil, errors.New("the token has expired (or has no exp)")
	}
	if !c.VerifyNotBefore(now.Add(skew).Unix(), false) || !c.VerifyIssuedAt(now.Add(skew).Unix(), false) {
		return nil, errors.New("the token is not valid yet")
	}
	return c, nil
}

func str(c jwt.MapClaims, k string) string { s, _ := c[k].(string); return s }

// groups: a list of strings; Keycloak's full paths ("/operator") count as their last segment.
func groups(v any) []string {
	raw, _ := v.([]any)
	out := []string{}
	for _, g := range raw {
		if s, ok := g.(string); ok && s != "" {
			out = append(out, s[strings.LastIndex(s, "/")+1:])
		}
	}
	return out
}
