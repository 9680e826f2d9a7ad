// A31: the claim mapper against a local issuer (httptest discovery + JWKS): people, services and every refused
// token shape (another issuer, expired, another audience, a rotated-out key, alg none, HMAC with the public key).
package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v4"
	"go.temporal.io/server/common/authorization"
)

type issuer struct {
	srv  *httptest.Server
	mu   sync.Mutex
	keys map[string]*rsa.PrivateKey // published
}

func newIssuer(t *testing.T) *issuer {
	is := &issuer{keys: map[string]*rsa.PrivateKey{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": is.srv.URL, "jwks_uri": is.srv.URL + "/certs"})
	})
	mux.HandleFunc("/certs", func(w http.ResponseWriter, _ *http.Request) {
		is.mu.Lock()
		defer is.mu.Unlock()
		set := jose.JSONWebKeySet{}
		for kid, k := range is.keys {
			set.Keys = append(set.Keys, jose.JSONWebKey{Key: &k.PublicKey, KeyID: kid, Algorithm: "RS256", Use: "sig"})
		}
		_ = json.NewEncoder(w).Encode(set)
	})
	is.srv = httptest.NewServer(mux)
	t.Cleanup(is.srv.Close)
	is.rotate("k1")
	return is
}

func (is *issuer) rotate(kid string) *rsa.PrivateKey {
	k, _ := rsa.GenerateKey(rand.Reader, 2048)
	is.mu.Lock()
	is.keys = map[string]*rsa.PrivateKey{kid: k}
	is.mu.Unlock()
	return k
}

func (is *issuer) key(kid string) *rsa.PrivateKey {
	is.mu.Lock()
	defer is.mu.Unlock()
	return is.keys[kid]
}

func sign(t *testing.T, key *rsa.PrivateKey, kid string, c jwt.MapClaims) string {
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, c)
	tok.Header["kid"] = kid
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return "Bearer " + s
}

func settingsFor(is *issuer) Settings {
	return Settings{Issuer: is.srv.URL, Audience: "apipay-temporal", GroupsClaim: "groups",
		OperatorGroups: []string{"operator", "admin", "finance-approver"}, ViewerGroups: []string{"viewer"},
		ServiceClients: []string{"apipay-temporal-service"}, Namespaces: []string{"default"}, IdentityPrefix: "idp:",
		JWKSRefresh: 10 * time.Minute, AllowedSkew: 30 * time.Second}
}

func base(is *issuer, extra jwt.MapClaims) jwt.MapClaims {
	c := jwt.MapClaims{"iss": is.srv.URL, "sub": "u-1", "aud": []string{"apipay-admin-api", "apipay-temporal"},
		"exp": time.Now().Add(5 * time.Minute).Unix(), "iat": time.Now().Unix(), "azp": "apipay-tests",
		"name": "Otto Operator", "email": "otto@example.test", "groups": []string{"/operator"}}
	for k, v := range extra {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

func TestPeopleAndServices(t *testing.T) {
	is := newIssuer(t)
	m := NewClaimMapper(settingsFor(is))
	c, err := m.GetClaims(&authorization.AuthInfo{AuthToken: sign(t, is.key("k1"), "k1", base(is, nil))})
	if err != nil {
		t.Fatal(err)
	}
	p := c.Extensions.(*Person)
	if p.Role != RoleOperator || p.Subject != "u-1" || p.Email != "otto@example.test" || c.System != 0 ||
		c.Subject != "idp:u-1@"+is.srv.URL || c.Namespaces["default"] != authorization.RoleWriter {
		t.Fatalf("operator: %+v %+v", c, p)
	}
	c, _ = m.GetClaims(&authorization.AuthInfo{AuthToken: sign(t, is.key("k1"), "k1", base(is, jwt.MapClaims{"groups": []string{"viewer"}}))})
	if c.Extensions.(*Person).Role != RoleViewer || c.Namespaces["default"] != authorization.RoleReader {
		t.Fatalf("viewer: %+v", c)
	}
	c, _ = m.GetClaims(&authorization.AuthInfo{AuthToken: sign(t, is.key("k1"), "k1", base(is, jwt.MapClaims{"groups": []string{"merchant"}}))})
	if c.Extensions.(*Person).Role != RoleNone || c.Namespaces != nil {
		t.Fatalf("merchant: %+v", c)
	}
	c, _ = m.GetClaims(&authorization.AuthInfo{AuthToken: sign(t, is.key("k1"), "k1", base(is, jwt.MapClaims{"azp": "apipay-temporal-service", "groups": nil}))})
	if c.System != authorization.RoleAdmin || c.Extensions != nil {
		t.Fatalf("service: %+v", c)
	}
}

func TestRefusedTokens(t *testing.T) {
	is := newIssuer(t)
	m := NewClaimMapper(settingsFor(is))
	k1 := is.key("k1")
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	pub, _ := x509.MarshalPKIXPublicKey(&k1.PublicKey)
	hmac := jwt.NewWithClaims(jwt.SigningMethodHS256, base(is, nil))
	hmac.Header["kid"] = "k1"
	hs, _ := hmac.SignedString(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}))
	none := jwt.NewWithClaims(jwt.SigningMethodNone, base(is, nil))
	ns, _ := none.SignedString(jwt.UnsafeAllowNoneSignatureType)
	cases := map[string]string{
		"no token":        "",
		"not bearer":      "Basic abc",
		"another issuer":  sign(t, k1, "k1", base(is, jwt.MapClaims{"iss": "http://evil.test/realms/apipay"})),
		"expired":         sign(t, k1, "k1", base(is, jwt.MapClaims{"exp": time.Now().Add(-2 * time.Minute).Unix()})),
		"no exp":          sign(t, k1, "k1", base(is, jwt.MapClaims{"exp": nil})),
		"not yet valid":   sign(t, k1, "k1", base(is, jwt.MapClaims{"nbf": time.Now().Add(5 * time.Minute).Unix()})),
		"other audience":  sign(t, k1, "k1", base(is, jwt.MapClaims{"aud": "apipay-admin-api"})),
		"no subject":      sign(t, k1, "k1", base(is, jwt.MapClaims{"sub": nil})),
		"unknown key":     sign(t, other, "k9", base(is, nil)),
		"wrong key":       sign(t, other, "k1", base(is, nil)),
		"alg none":        "Bearer " + ns,
		"hmac public key": "Bearer " + hs,
	}
	for name, tok := range cases {
		if c, err := m.GetClaims(&authorization.AuthInfo{AuthToken: tok}); err == nil {
			t.Errorf("%s: accepted as %+v", name, c)
		}
	}
}

func TestRotation(t *testing.T) {
	is := newIssuer(t)
	m := NewClaimMapper(settingsFor(is))
	old := is.key("k1")
	if _, err := m.GetClaims(&authorization.AuthInfo{AuthToken: sign(t, old, "k1", base(is, nil))}); err != nil {
		t.Fatal(err)
	}
	k2 := is.rotate("k2") // k1 removed from the JWKS
	if _, err := m.GetClaims(&authorization.AuthInfo{AuthToken: sign(t, k2, "k2", base(is, nil))}); err != nil {
		t.Fatalf("a new key id is fetched: %v", err)
	}
	if _, err := m.GetClaims(&authorization.AuthInfo{AuthToken: sign(t, old, "k1", base(is, nil))}); err == nil {
		t.Fatal("a rotated-out key still verifies")
	}
}
