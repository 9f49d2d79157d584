// Package idempotency tests Idempotency-Key on a POST mounted only in the test server (no
// public POST exists yet; the leads issue proves it again on POST /leads).
package idempotency

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/app/platform/httpx"
	"github.com/brokerdesk/brokerdesk/ent/contact"
	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

type userInput struct {
	Email string `json:"email"`
}

func (in userInput) Validate() error {
	var v errs.Invalid
	v.Require("email", in.Email != "")
	return v.Err()
}

// routes: POST /_test/users creates a record (a contact: the app role may not write users) and
// its event; "boom" in the e-mail fails after the insert (500), "taken" answers 409 after the
// insert, "slow" holds the request.
func routes(v1 fiber.Router, m app.Middleware) {
	ev := events.NewService()
	create := func(c *fiber.Ctx) error {
		var in userInput
		if err := httpx.Decode(c, &in); err != nil {
			return err
		}
		ctx := c.UserContext()
		u, err := tenancy.Client(ctx).Contact.Create().SetType(contact.TypePrivate).SetLastName("T").SetEmail(in.Email).Save(ctx)
		if err != nil {
			return err
		}
		view := fiber.Map{"id": u.ID, "email": in.Email}
		if err := ev.Record(ctx, "contact.created", view); err != nil {
			return err
		}
		switch {
		case strings.Contains(in.Email, "boom"):
			return errors.New("boom")
		case strings.Contains(in.Email, "taken"):
			return errs.Conflict("email_taken", "taken")
		case strings.Contains(in.Email, "slow"):
			time.Sleep(300 * time.Millisecond)
		}
		return httpx.Created(c, "/api/public/v1/contacts/"+u.ID.String(), view, u.Version)
	}
	v1.Post("/_test/users", m.Auth, m.Idempotent, create)
	v1.Post("/_test/users-too", m.Auth, m.Idempotent, create)
	v1.Post("/_test/things/:thingId/act", m.Auth, m.Idempotent, create)
}

func post(t *testing.T, env *apitest.Env, path, key, idem, body string) *apitest.Response {
	t.Helper()
	h := map[string]string{}
	if idem != "" {
		h["Idempotency-Key"] = idem
	}
	return env.Do(t, apitest.Request{Method: "POST", Path: path, Key: key, Body: body, Header: h})
}

func countUsers(t *testing.T, env *apitest.Env, co *apitest.Company, email string) int {
	t.Helper()
	ctx := context.Background()
	var n int
	if err := env.Pinned(ctx, co.ID, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, "SELECT count(*) FROM contacts WHERE email = $1", email).Scan(&n)
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestIdempotency_ConcurrentRetries(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, app.WithTestRoutes(routes))
	a := env.NewCompany(t)
	body := `{"email":"slow-once@example.com"}`
	const n = 50
	res := make([]*apitest.Response, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i] = post(t, env, "/_test/users", a.Secret, "key-concurrent", body)
		}()
	}
	wg.Wait()
	var original *apitest.Response
	for _, r := range res {
		if r.Status == 201 && r.Header.Get("Idempotent-Replayed") == "" {
			if original != nil {
				t.Fatal("two requests executed")
			}
			original = r
		}
	}
	if original == nil {
		t.Fatal("no request executed")
	}
	created, inUse, replayed := 0, 0, 0
	for _, r := range res {
		switch {
		case r == original:
			created++
		case r.Status == 409:
			if r.Problem(t).Code != "idempotency_key_in_use" {
				t.Errorf("409 code %q", r.Problem(t).Code)
			}
			inUse++
		case r.Status == 201 && bytes.Equal(r.Body, original.Body) && r.Header.Get("Idempotent-Replayed") == "true" &&
			r.Header.Get("Location") == original.Header.Get("Location") && r.Header.Get("ETag") == original.Header.Get("ETag"):
			replayed++
		default:
			t.Errorf("answer %d %s is neither the original nor 409", r.Status, r.Body)
		}
	}
	t.Logf("%d created, %d replayed, %d in use", created, replayed, inUse)
	if got := countUsers(t, env, a, "slow-once@example.com"); got != 1 {
		t.Errorf("%d users created, want 1", got)
	}
	again := post(t, env, "/_test/users", a.Secret, "key-concurrent", body)
	if again.Status != 201 || !bytes.Equal(again.Body, original.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("retry after completion: %d %s", again.Status, again.Body)
	}
}

func TestIdempotency_Rules(t *testing.T) {
	t.Parallel()
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	env := apitest.New(t, app.WithTestRoutes(routes), app.WithClock(clock))
	a, b := env.NewCompany(t), env.NewCompany(t)
	other := a.KeyWithScopes(t, "*")

	first := post(t, env, "/_test/users", a.Secret, "k1", `{"email":"one@example.com"}`)
	if first.Status != 201 {
		t.Fatalf("first: %d %s", first.Status, first.Body)
	}
	t.Run("a different body with the key is 422", func(t *testing.T) {
		r := post(t, env, "/_test/users", a.Secret, "k1", `{"email":"two@example.com"}`)
		if r.Status != 422 || r.Problem(t).Code != "idempotency_key_reused" {
			t.Errorf("%d %s", r.Status, r.Body)
		}
	})
	t.Run("the same key on another resource of the route or another query is 422", func(t *testing.T) {
		body := `{"email":"act@example.com"}`
		if r := post(t, env, "/_test/things/1/act", a.Secret, "k-act", body); r.Status != 201 {
			t.Fatalf("first action: %d %s", r.Status, r.Body)
		}
		for _, path := range []string{"/_test/things/2/act", "/_test/things/1/act?force=true"} {
			r := post(t, env, path, a.Secret, "k-act", body)
			if r.Status != 422 || r.Problem(t).Code != "idempotency_key_reused" {
				t.Errorf("%s with the key of /_test/things/1/act: %d %s", path, r.Status, r.Body)
			}
		}
		if r := post(t, env, "/_test/things/1/act", a.Secret, "k-act", body); r.Status != 201 || r.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("the same action again: %d, replayed %q", r.Status, r.Header.Get("Idempotent-Replayed"))
		}
	})
	t.Run("keys are per credential, company and route", func(t *testing.T) {
		for _, r := range []*apitest.Response{
			post(t, env, "/_test/users", other, "k1", `{"email":"one-b@example.com"}`),
			post(t, env, "/_test/users", b.Secret, "k1", `{"email":"one@example.com"}`),
			post(t, env, "/_test/users-too", a.Secret, "k1", `{"email":"one-c@example.com"}`),
		} {
			if r.Status != 201 || r.Header.Get("Idempotent-Replayed") != "" {
				t.Errorf("%d %s (replayed %q)", r.Status, r.Body, r.Header.Get("Idempotent-Replayed"))
			}
		}
	})
	t.Run("without a key every request runs", func(t *testing.T) {
		post(t, env, "/_test/users", a.Secret, "", `{"email":"nokey@example.com"}`)
		r := post(t, env, "/_test/users", a.Secret, "", `{"email":"nokey@example.com"}`)
		if r.Status != 201 || r.Header.Get("Idempotent-Replayed") != "" {
			t.Errorf("second create without key: %d %s", r.Status, r.Header.Get("Idempotent-Replayed"))
		}
		if n := countUsers(t, env, a, "nokey@example.com"); n != 2 {
			t.Errorf("%d records created without a key, want 2", n)
		}
	})
	t.Run("validation failures are not stored", func(t *testing.T) {
		r := post(t, env, "/_test/users", a.Secret, "k2", `{"email":""}`)
		if r.Status != 422 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		r = post(t, env, "/_test/users", a.Secret, "k2", `{"email":`)
		if r.Status != 400 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		r = post(t, env, "/_test/users", a.Secret, "k2", `{"email":"fixed@example.com"}`)
		if r.Status != 201 || r.Header.Get("Idempotent-Replayed") != "" {
			t.Errorf("corrected retry: %d %s", r.Status, r.Body)
		}
	})
	t.Run("errors after execution are stored and replayed, the change rolled back", func(t *testing.T) {
		for _, tc := range []struct {
			email  string
			status int
		}{{"boom@example.com", 500}, {"taken@example.com", 409}} {
			key := "k-" + tc.email
			r1 := post(t, env, "/_test/users", a.Secret, key, fmt.Sprintf(`{"email":%q}`, tc.email))
			r2 := post(t, env, "/_test/users", a.Secret, key, fmt.Sprintf(`{"email":%q}`, tc.email))
			if r1.Status != tc.status || r2.Status != tc.status || !bytes.Equal(r1.Body, r2.Body) || r2.Header.Get("Idempotent-Replayed") != "true" {
				t.Errorf("%s: %d %s / %d %s", tc.email, r1.Status, r1.Body, r2.Status, r2.Body)
			}
			if n := countUsers(t, env, a, tc.email); n != 0 {
				t.Errorf("%s: %d users left by a failed request", tc.email, n)
			}
		}
	})
	t.Run("bad keys and bad credentials", func(t *testing.T) {
		if r := post(t, env, "/_test/users", a.Secret, strings.Repeat("x", 256), `{"email":"long@example.com"}`); r.Status != 400 {
			t.Errorf("long key: %d", r.Status)
		}
		if r := post(t, env, "/_test/users", a.Secret, "ä-key", `{"email":"long@example.com"}`); r.Status != 400 {
			t.Errorf("non-ASCII key: %d", r.Status)
		}
		if r := post(t, env, "/_test/users", "sk_live_nope", "k3", `{"email":"x@example.com"}`); r.Status != 401 {
			t.Errorf("bad key: %d", r.Status)
		}
		r := post(t, env, "/_test/users", a.Secret, "k3", `{"email":"k3@example.com"}`)
		if r.Status != 201 || r.Header.Get("Idempotent-Replayed") != "" {
			t.Errorf("k3 after a 401 with it: %d", r.Status)
		}
	})
	t.Run("after 24 hours the key is new again", func(t *testing.T) {
		mu.Lock()
		now = now.Add(24*time.Hour + time.Minute)
		mu.Unlock()
		r := post(t, env, "/_test/users", a.Secret, "k1", `{"email":"after@example.com"}`)
		if r.Status != 201 || r.Header.Get("Idempotent-Replayed") != "" {
			t.Errorf("expired key: %d %s", r.Status, r.Body)
		}
	})
}
