// A31: the issuer's signing keys for the claim mapper. The JWKS address comes from the issuer's discovery document
// (or TEMPORAL_AUTH_JWKS_URL); keys are fetched on first use, again after the refresh period, and again when a token
// names an unknown key id (rotation needs no restart; at most one such fetch every 10 s). A key the issuer removed
// stops verifying at the next fetch. Only signature keys; the JWK's own `alg`, when set, must match the token's.
package main

import (
	"crypto/ecdsa"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// KeySet caches one issuer's JWKS.
type KeySet struct {
	issuer, jwksURL string
	refresh         time.Duration
	client          *http.Client
	now             func() time.Time

	mu        sync.Mutex
	keys      map[string]jose.JSONWebKey
	fetchedAt time.Time
	lastTry   time.Time // the last fetch an unknown key id caused
}

const unknownKidBackoff = 10 * time.Second

// NewKeySet over the issuer (discovery) or an explicit JWKS address.
func NewKeySet(issuer, jwksURL string, refresh time.Duration) *KeySet {
	return &KeySet{issuer: issuer, jwksURL: jwksURL, refresh: refresh, client: &http.Client{Timeout: 5 * time.Second}, now: time.Now}
}

func (k *KeySet) getJSON(url string, into any) error {
	resp, err := k.client.Get(url)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return json.NewDecoder(http.MaxBytesReader(nil, resp.Body, 1<<20)).Decode(into)
}

func (k *KeySet) fetch() error {
	url := k.jwksURL
	if url == "" {
		var doc struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := k.getJSON(strings.TrimRight(k.issuer, "/")+"/.well-known/openid-configuration", &doc); err != nil {
			return err
		}
		if doc.Issuer != k.issuer || doc.JWKSURI == "" {
			return fmt.Errorf("the discovery document of %s names issuer %q and jwks_uri %q", k.issuer, doc.Issuer, doc.JWKSURI)
		}
		url = doc.JWKSURI
	}
	var set jose.JSONWebKeySet
	if err := k.getJSON(url, &set); err != nil {
		return err
	}
	keys := map[string]jose.JSONWebKey{}
	for _, key := range set.Keys {
		if key.Use != "" && key.Use != "sig" {
			continue
		}
		switch key.Key.(type) {
		case *rsa.PublicKey, *ecdsa.PublicKey:
			keys[key.KeyID] = key
		}
	}
	k.keys, k.fetchedAt = keys, k.now()
	return nil
}

// Key returns the public key for `kid`, checked against the token's `alg`.
func (k *KeySet) Key(kid, alg string) (any, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	var fetchErr error
	stale := k.keys == nil || k.now().Sub(k.fetchedAt) > k.refresh
	if _, known := k.keys[kid]; stale {
		fetchErr = k.fetch()
	} else if !known && k.now().Sub(k.lastTry) > unknownKidBackoff {
		k.lastTry = k.now() // an unknown key id refetches at most once per backoff
		fetchErr = k.fetch()
	}
	key, ok := k.keys[kid]
	if !ok {
		if fetchErr != nil {
			return nil, fmt.Errorf("signing keys of %s: %w", k.issuer, fetchErr)
		}
		return nil, errors.New("unknown signing key id")
	}
	if key.Algorithm != "" && key.Algorithm != alg {
		return nil, fmt.Errorf("key %s is for %s, the token says %s", kid, key.Algorithm, alg)
	}
	return key.Key, nil
}
