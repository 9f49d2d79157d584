package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
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
