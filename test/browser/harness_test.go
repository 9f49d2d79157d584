// Package browser drives Debian's Chromium (headless, through the DevTools protocol with
// chromedp) against the real server: website pages on one origin post leads to the intake on
// another, as plain HTML forms and through the JavaScript SDK.
package browser

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/test/apitest"
	"github.com/brokerdesk/brokerdesk/test/testsvc"
)

func TestMain(m *testing.M) {
	// Chromium first, installed if need be (minutes on a fresh machine), so that no test's
	// deadline counts the installation. None: exit 2 saying what to install, as apitest.Main
	// says what to set without a database.
	if _, err := testsvc.Chromium(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "browser:", err)
		os.Exit(2)
	}
	os.Exit(apitest.Main(m))
}

// newBrowser starts headless Chromium with a fresh profile and returns its allocator context;
// tabs are chromedp.NewContext of it. The browser is testsvc.Chromium's (found or installed by
// TestMain): CHROMIUM, one in PATH, or Debian's, installed where the tests may (root, apt-get).
// With none the package fails saying what to install: the browser tests never skip.
func newBrowser(t *testing.T, ctx context.Context) context.Context {
	t.Helper()
	path, err := testsvc.Chromium(ctx)
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox, // the tests run as root
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.UserDataDir(t.TempDir()),
		// This machine's network is closed: no calls home, no component or sync traffic.
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.WindowSize(1024, 900),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	browser, cancelBrowser := chromedp.NewContext(alloc)
	if err := chromedp.Do(browser); err != nil { // starts the process
		cancelBrowser()
		cancelAlloc()
		t.Fatalf("start Chromium %s: %v", path, err)
	}
	t.Cleanup(func() { cancelBrowser(); cancelAlloc() })
	return browser
}

// requestLog records the URL of every request a tab sends.
type requestLog struct {
	mu   sync.Mutex
	urls []string
}

func (l *requestLog) add(u string) { l.mu.Lock(); l.urls = append(l.urls, u); l.mu.Unlock() }

// to returns the recorded requests whose URL starts with prefix.
func (l *requestLog) to(prefix string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, u := range l.urls {
		if strings.HasPrefix(u, prefix) {
			out = append(out, u)
		}
	}
	return out
}

// newTab opens a tab whose network requests (preflights included) are recorded.
func newTab(t *testing.T, browser context.Context) (context.Context, *requestLog) {
	t.Helper()
	tab, cancel := chromedp.NewContext(browser)
	t.Cleanup(cancel)
	log := &requestLog{}
	err := chromedp.Listen(tab, func(ev any) { // the network domain is enabled on every tab
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			log.add(e.Request.URL)
		}
	})
	if err != nil {
		t.Fatalf("open tab: %v", err)
	}
	return tab, log
}

// stepTimeout bounds one browser step: a page that never shows what a step waits for fails
// the test with what the tab shows. Generous, because a 2-core machine running other builds
// took 18 s for one form step (load 37); it only matters when a step fails.
const stepTimeout = 60 * time.Second

// do runs steps in tab, failing the test with the tab's address and text on an error.
func do(t *testing.T, tab context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	run(t, tab, chromedp.Steps(steps...))
}

// run runs one action in tab and returns its value, failing the test with the tab's address
// and text on an error.
func run[T any](t *testing.T, tab context.Context, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		ctx, cancel := context.WithTimeout(tab, 2*time.Second)
		defer cancel()
		loc, _ := chromedp.Run(ctx, chromedp.Location())
		text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ''`))
		t.Fatalf("browser: %v\n  the tab shows %s:\n%.600s", err, loc, text)
	}
	return v
}

// serveAPI serves the package's server on a real listener at 127.0.0.1 and returns the base
// URL of a proxy in front of it (apitest.Proxy, also at 127.0.0.1) that checks every request the
// browser makes and every answer it gets against the OpenAPI document; both shut down at
// cleanup.
func serveAPI(t *testing.T, env *apitest.Env) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- env.Server.ServeListener(ctx, ln, time.Second) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, net.ErrClosed) {
			t.Errorf("serve: %v", err)
		}
	})
	base := "http://" + ln.Addr().String()
	for i := 0; ; i++ {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			break
		}
		if i == 50 {
			t.Fatalf("API at %s does not answer: %v", base, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return apitest.Proxy(t, base)
}

// servePages serves the website's pages on localhost (a different origin from the API's
// 127.0.0.1) and returns its base URL, http://localhost:PORT.
func servePages(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return "http://localhost:" + port
}

// lead is a stored lead as the tests read it from the database.
type lead struct {
	ID               uuid.UUID
	FirstName        string
	LastName         string
	Email            *string
	Phone            *string
	Source           *string
	Notes            string
	AdditionalFields map[string]string
	MetaURL          *string
	Test             bool
}

// attachment is a stored file of a lead.
type attachment struct {
	Filename    string
	ContentType string
	Content     []byte
}

// pinned runs f in a transaction of the app role pinned to company, so row-level security
// shows exactly that company's rows.
func pinned(t *testing.T, env *apitest.Env, company uuid.UUID, f func(tx *sql.Tx) error) {
	t.Helper()
	ctx := context.Background()
	tx, err := env.AppDB.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SELECT set_config('app.company_id', $1, true)", company.String()); err != nil {
		t.Fatal(err)
	}
	if err := f(tx); err != nil {
		t.Fatal(err)
	}
}

// leads returns the company's leads, oldest first.
func leads(t *testing.T, env *apitest.Env, company uuid.UUID) []lead {
	t.Helper()
	var out []lead
	pinned(t, env, company, func(tx *sql.Tx) error {
		rows, err := tx.Query(`SELECT id, first_name, last_name, email, phone, source, notes, additional_fields,
			meta_url, test FROM leads ORDER BY created_at, id`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var l lead
			var extra []byte
			if err := rows.Scan(&l.ID, &l.FirstName, &l.LastName, &l.Email, &l.Phone, &l.Source, &l.Notes, &extra,
				&l.MetaURL, &l.Test); err != nil {
				return err
			}
			if err := json.Unmarshal(extra, &l.AdditionalFields); err != nil {
				return fmt.Errorf("additional_fields %s: %w", extra, err)
			}
			out = append(out, l)
		}
		return rows.Err()
	})
	return out
}

// leadByEmail returns the company's one lead with email, failing when there is none or more.
func leadByEmail(t *testing.T, env *apitest.Env, company uuid.UUID, email string) lead {
	t.Helper()
	var found []lead
	for _, l := range leads(t, env, company) {
		if l.Email != nil && *l.Email == email {
			found = append(found, l)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d leads with e-mail %s, want 1", len(found), email)
	}
	return found[0]
}

// attachments returns the files stored for a lead.
func attachments(t *testing.T, env *apitest.Env, company, leadID uuid.UUID) []attachment {
	t.Helper()
	var out []attachment
	pinned(t, env, company, func(tx *sql.Tx) error {
		rows, err := tx.Query(`SELECT filename, content_type, content FROM lead_attachments WHERE lead_id = $1
			ORDER BY created_at`, leadID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var a attachment
			if err := rows.Scan(&a.Filename, &a.ContentType, &a.Content); err != nil {
				return err
			}
			out = append(out, a)
		}
		return rows.Err()
	})
	return out
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
