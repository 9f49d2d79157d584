// Package benchportal holds the benchmarks of the customer portal (issue 23): a signed-in page
// (the contracts of a customer with ten, over HTTP on a real socket: the company lookup, the
// session lookup and pin, the query and the template) and a sign-in (argon2id and a new
// session). go tool task bench runs them; each reports the median (p50-ms) and the rate
// (ops/s) of its sequential requests.
package benchportal

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/platform/passhash"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/portalaccess"
	"github.com/brokerdesk/brokerdesk/test/apitest"
	"github.com/brokerdesk/brokerdesk/test/portaltest"
	"github.com/brokerdesk/brokerdesk/test/signing/signingtest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

// customer is a signed-in demo customer with ten contracts.
type customer struct {
	w    *signingtest.World
	base string // http://…/portal/{companyId}
	c    portaltest.Customer
}

func setup(b *testing.B) customer {
	b.Helper()
	w := signingtest.Setup(b)
	br := w.NewBrokerWith(b, "customer_portal", "emails")
	contact := w.NewContact(b, br, "Bea", "Bench", signingtest.Address("bench"))
	var ins struct{ Data []struct{ ID string } }
	w.Env.Do(b, apitest.Request{Path: "/insurers?vuNumber=5501", Key: br.Co.Secret}).Decode(b, &ins)
	for i := range 10 {
		apitest.Create[struct{ ID string }](b, w.Env, br.Co.Secret, "/contracts", map[string]any{"contactId": contact,
			"insurerId": ins.Data[0].ID, "policyNumber": fmt.Sprintf("BENCH-%03d", i), "type": "040", "status": "active",
			"premium": "64.00", "paymentFrequency": "yearly", "startDate": "2025-07-01"})
	}
	c := portaltest.SignIn(b, w.Env, br.Co.ID, uuid.MustParse(contact))
	return customer{w: w, base: w.Base + "/portal/" + br.Co.ID.String(), c: c}
}

// measure runs op b.N times and reports the median duration and the rate.
func measure(b *testing.B, op func() error) {
	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		t := time.Now()
		if err := op(); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t))
	}
	total := time.Since(start)
	b.StopTimer()
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(b.N)/total.Seconds(), "ops/s")
}

var client = &http.Client{Timeout: 30 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// BenchmarkPortal_ContractsPage: GET /portal/{companyId}/contracts of a signed-in customer
// with ten contracts.
func BenchmarkPortal_ContractsPage(b *testing.B) {
	cu := setup(b)
	measure(b, func() error {
		req, _ := http.NewRequest("GET", cu.base+"/contracts", nil)
		req.AddCookie(&http.Cookie{Name: portaltest.CookieName, Value: cu.c.Cookie})
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), "BENCH-009") {
			return fmt.Errorf("contracts page: %d", resp.StatusCode)
		}
		return nil
	})
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// BenchmarkPortal_SignIn: POST /portal/{companyId}/login with the right password: the argon2id
// check (the staff's parameters) and a new session.
func BenchmarkPortal_SignIn(b *testing.B) {
	cu := setup(b)
	const password = "Sommer am Meer 2026"
	var email string
	cu.w.Env.InCompany(b, cu.c.Company, func(ctx context.Context, db *ent.Client) error {
		acc, err := db.PortalAccess.UpdateOneID(cu.c.Access).SetPasswordHash(passhash.Hash(password)).Save(ctx)
		if err == nil && acc.Status != portalaccess.StatusActive {
			err = fmt.Errorf("access %s", acc.Status)
		}
		if acc != nil {
			email = acc.Email
		}
		return err
	})
	resp, err := client.Get(cu.base + "/login")
	if err != nil {
		b.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var nonce string
	for _, c := range resp.Cookies() {
		if c.Name == "bd_portal_csrf" {
			nonce = c.Value
		}
	}
	m := csrfField.FindStringSubmatch(string(page))
	if m == nil || nonce == "" {
		b.Fatal("no CSRF token on the sign-in page")
	}
	form := url.Values{"csrf": {m[1]}, "email": {email}, "password": {password}}.Encode()
	measure(b, func() error {
		req, _ := http.NewRequest("POST", cu.base+"/login", strings.NewReader(form))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(&http.Cookie{Name: "bd_portal_csrf", Value: nonce})
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 303 {
			return fmt.Errorf("sign-in: %d", resp.StatusCode)
		}
		return nil
	})
}
