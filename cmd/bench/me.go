package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/policy"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

const mePath = "/api/public/v1/me"

// meSpec is GET /me with a company-level secret key.
func meSpec() reqSpec {
	return reqSpec{method: http.MethodGet, path: mePath, want: http.StatusOK,
		headers: func(k *benchKey) [][2]string {
			return [][2]string{{"Authorization", "Bearer " + k.secret}, {"Accept", "application/json"}}
		}}
}

// checkMe asks GET /me once with net/http, checks that it names the seeded company and returns
// the quota the server announces.
func checkMe(ctx context.Context, addr string, fx fixture) (quota, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+mePath, nil)
	if err != nil {
		return quota{}, err
	}
	req.Header.Set("Authorization", "Bearer "+fx.secrets.keys[0].secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return quota{}, fmt.Errorf("GET /me: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return quota{}, fmt.Errorf("GET /me: %d %s", resp.StatusCode, body)
	}
	var me struct {
		Company struct {
			ID string `json:"id"`
		} `json:"company"`
	}
	if err := json.Unmarshal(body, &me); err != nil || me.Company.ID != fx.companyID {
		return quota{}, fmt.Errorf("GET /me answered %s, want company %s", body, fx.companyID)
	}
	http.DefaultClient.CloseIdleConnections()
	return quotaOf(resp.Header), nil
}

// tokenPool is a pool of OAuth access tokens of company (client credentials), each of its own
// client: the v1 quota counts per grant (client + user + company), so each token is one quota
// as each key is. Tokens are issued by the running server's token endpoint at addr.
func tokenPool(ops *operator.Service, company uuid.UUID, addr func() string) *keyPool {
	p := &keyPool{ops: ops}
	p.make = func(ctx context.Context, n int) (*benchKey, error) {
		cl, err := ops.CreateOAuthClient(ctx, operator.NewOAuthClientInput{Name: fmt.Sprintf("bench client %d", n),
			RedirectURIs: []string{"https://partner.example/cb"}, Scopes: policy.Scopes, CompanyID: &company, Env: tenancy.EnvLive})
		if err != nil {
			return nil, fmt.Errorf("create oauth client: %w", err)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr()+"/oauth/token",
			strings.NewReader(url.Values{"grant_type": {"client_credentials"}}.Encode()))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(cl.ID.String(), cl.Secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, fmt.Errorf("token: %w", err)
		}
		defer resp.Body.Close()
		var tok struct {
			AccessToken string `json:"access_token"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || resp.StatusCode != http.StatusOK || tok.AccessToken == "" {
			return nil, fmt.Errorf("token: status %d, %v", resp.StatusCode, err)
		}
		return &benchKey{secret: tok.AccessToken}, nil
	}
	return p
}
