// Package devrun tests `brokerdesk dev` end to end: the binary starts its own PostgreSQL,
// seeds the demo company, serves, stops cleanly on SIGINT and reuses everything on a second run.
package devrun

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/app/platform/mail"
	"github.com/brokerdesk/brokerdesk/test/apitest"
	"github.com/brokerdesk/brokerdesk/test/testsvc"
)

var (
	keyPattern = map[string]*regexp.Regexp{
		"sk_live":  regexp.MustCompile(`sk_live_[0-9A-Za-z]{43}`),
		"sk_test":  regexp.MustCompile(`sk_test_[0-9A-Za-z]{43}`),
		"pk_live":  regexp.MustCompile(`pk_live_[0-9A-Za-z]{43}`),
		"password": regexp.MustCompile(`demo-[0-9a-f]{16}`), // the demo user's, for the OAuth sign-in
	}
	// endOfBlock is the last line dev prints once the server listens.
	endOfBlock = "Ctrl-C stops the server"
)

func TestDev_RunTwice(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	bin := buildBinary(ctx, t)
	dataDir := filepath.Join(testsvc.UsableTempDir(t), "data")

	first := startDev(ctx, t, bin, dataDir)
	if !strings.Contains(first.out, "seeded now") {
		t.Errorf("first run: want the demo data seeded now, got:\n%s", first.out)
	}
	first.checkMe(t)
	first.checkMailbox(ctx, t)
	first.checkInbound(ctx, t)
	first.checkPortal(t)
	first.interrupt(t)
	if first.ownCluster {
		checkStopped(t, dataDir)
	}

	second := startDev(ctx, t, bin, dataDir)
	if !first.ownCluster {
		t.Log("dev ran PostgreSQL in Docker: its data is not kept, so the second run seeds again")
	} else {
		if strings.Contains(second.out, "seeded now") {
			t.Errorf("second run seeded again, want the data of the first run reused:\n%s", second.out)
		}
		for kind, k := range first.keys {
			if second.keys[kind] != k {
				t.Errorf("second run printed %s key %s, want %s from the first run", kind, second.keys[kind], k)
			}
		}
	}
	second.checkMe(t)
	second.checkMailbox(ctx, t)
	second.checkPortal(t)
	if first.ownCluster && (second.mail.teamPW != first.mail.teamPW || second.mail.customerPW != first.mail.customerPW) {
		t.Errorf("second run printed the mail passwords %s and %s, want %s and %s from the first run (the mail client keeps them)",
			second.mail.teamPW, second.mail.customerPW, first.mail.teamPW, first.mail.customerPW)
	}
	second.interrupt(t)
	if second.ownCluster {
		checkStopped(t, dataDir)
	}
}

// buildBinary builds cmd/brokerdesk into a temp dir.
func buildBinary(ctx context.Context, t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "brokerdesk")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/brokerdesk/brokerdesk/cmd/brokerdesk")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// devRun is one running `brokerdesk dev`.
type devRun struct {
	cmd        *exec.Cmd
	addr       string
	out        string // stdout up to the end of the printed block
	stderr     *apitest.LogBuffer
	keys       map[string]string
	mail       devMail
	ownCluster bool // a private cluster (not a container): postmaster.pid tells whether it stopped
	done       chan error
}

// startDev runs `brokerdesk dev --data dataDir` without DATABASE_URL and waits until it has
// printed its block of keys.
func startDev(ctx context.Context, t *testing.T, bin, dataDir string) *devRun {
	t.Helper()
	r := &devRun{addr: freeAddr(t), stderr: &apitest.LogBuffer{}, keys: map[string]string{}, done: make(chan error, 1)}
	r.cmd = exec.Command(bin, "dev", "--data", dataDir)
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "DATABASE_URL", "APP_DATABASE_URL", "LISTEN_ADDR", "APP_SECRET", "LOG_FORMAT":
		default:
			r.cmd.Env = append(r.cmd.Env, kv)
		}
	}
	r.cmd.Env = append(r.cmd.Env, "LISTEN_ADDR="+r.addr, "LOG_FORMAT=json")
	r.cmd.Stderr = r.stderr
	stdout, err := r.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatalf("start %s dev: %v", bin, err)
	}
	t.Cleanup(func() { r.kill(dataDir) })

	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		r.done <- r.cmd.Wait()
	}()
	var out strings.Builder
	timeout := time.After(60 * time.Second)
	for !strings.Contains(out.String(), endOfBlock) {
		select {
		case l, ok := <-lines:
			if !ok {
				err := <-r.done
				r.cmd = nil
				t.Fatalf("brokerdesk dev ended before it served (%v); is PostgreSQL (initdb) installed or a Docker engine running?\nstdout:\n%s\nstderr:\n%s",
					err, out.String(), r.stderr.String())
			}
			out.WriteString(l + "\n")
		case <-timeout:
			t.Fatalf("brokerdesk dev printed no keys within 60s\nstdout:\n%s\nstderr:\n%s", out.String(), r.stderr.String())
		case <-ctx.Done():
			t.Fatalf("test deadline\nstdout:\n%s\nstderr:\n%s", out.String(), r.stderr.String())
		}
	}
	go func() { // keep draining stdout so dev never blocks on a full pipe
		for range lines {
		}
	}()
	r.out = out.String()
	for kind, re := range keyPattern {
		if r.keys[kind] = re.FindString(r.out); r.keys[kind] == "" {
			t.Fatalf("no %s key in the output:\n%s", kind, r.out)
		}
	}
	r.mail = parseDevMail(t, r.out)
	r.ownCluster = strings.Contains(r.out, "private cluster in "+dataDir)
	if m := regexp.MustCompile(`PostgreSQL +(.*)`).FindStringSubmatch(r.out); m != nil {
		t.Logf("dev on %s: PostgreSQL %s", r.addr, m[1])
	}
	return r
}

// checkMe calls GET /me with the live and the sandbox secret key.
func (r *devRun) checkMe(t *testing.T) {
	t.Helper()
	for _, c := range []struct {
		kind    string
		sandbox bool
	}{{"sk_live", false}, {"sk_test", true}} {
		req, _ := http.NewRequest("GET", "http://"+r.addr+"/api/public/v1/me", nil)
		req.Header.Set("Authorization", "Bearer "+r.keys[c.kind])
		resp, err := apitest.Client(t).Do(req) // checked against the OpenAPI document
		if err != nil {
			t.Fatalf("GET /me: %v\nstderr:\n%s", err, r.stderr.String())
		}
		var me struct {
			Company struct {
				Name    string `json:"name"`
				Sandbox bool   `json:"sandbox"`
			} `json:"company"`
		}
		err = json.NewDecoder(resp.Body).Decode(&me)
		resp.Body.Close()
		if resp.StatusCode != 200 || err != nil {
			t.Fatalf("GET /me with the %s key: status %d (%v), want 200", c.kind, resp.StatusCode, err)
		}
		if me.Company.Name != "Demo Maklerbüro GmbH" || me.Company.Sandbox != c.sandbox {
			t.Errorf("GET /me with the %s key: company %q sandbox %v, want %q sandbox %v",
				c.kind, me.Company.Name, me.Company.Sandbox, "Demo Maklerbüro GmbH", c.sandbox)
		}
	}
}

// devMail is what dev printed about the demo mailbox.
type devMail struct {
	imapAddr, smtpAddr string
	teamPW, customerPW string
}

var (
	mailServerLine = regexp.MustCompile(`IMAP (127\.0\.0\.1:\d+) +SMTP (127\.0\.0\.1:\d+)`)
	teamLine       = regexp.MustCompile(`team@demo-makler\.test +password (\S+)`)
	customerLine   = regexp.MustCompile(`kunde@example\.test +password (\S+)`)
)

// parseDevMail reads the mail server's ports and the accounts' passwords from dev's output.
func parseDevMail(t *testing.T, out string) devMail {
	t.Helper()
	s, team, customer := mailServerLine.FindStringSubmatch(out), teamLine.FindStringSubmatch(out), customerLine.FindStringSubmatch(out)
	if s == nil || team == nil || customer == nil || !strings.Contains(out, "no encryption") {
		t.Fatalf("dev printed no mail client settings (IMAP/SMTP host:port, both accounts' passwords):\n%s", out)
	}
	return devMail{imapAddr: s[1], smtpAddr: s[2], teamPW: team[1], customerPW: customer[1]}
}

// checkMailbox wants the demo mailbox listed by GET /mailboxes with the printed live key, and the
// printed mail client settings to work: both accounts log in to IMAP and SMTP as Thunderbird
// would. Bugs it would catch: the demo mailbox not created (or created twice on the second
// run), pointing at another server than the printed one, or printed passwords the server
// does not take.
func (r *devRun) checkMailbox(ctx context.Context, t *testing.T) {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+r.addr+"/api/public/v1/mailboxes", nil)
	req.Header.Set("Authorization", "Bearer "+r.keys["sk_live"])
	resp, err := apitest.Client(t).Do(req) // checked against the OpenAPI document
	if err != nil {
		t.Fatalf("GET /mailboxes: %v", err)
	}
	var list struct {
		Data []struct {
			Email  string `json:"email"`
			Shared bool   `json:"shared"`
		} `json:"data"`
	}
	err = json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if resp.StatusCode != 200 || err != nil {
		t.Fatalf("GET /mailboxes: status %d (%v), want 200", resp.StatusCode, err)
	}
	if len(list.Data) != 1 || list.Data[0].Email != "team@demo-makler.test" || !list.Data[0].Shared {
		t.Errorf("GET /mailboxes: %+v, want the one shared mailbox team@demo-makler.test", list.Data)
	}
	for _, acc := range []struct{ user, pw string }{{"team@demo-makler.test", r.mail.teamPW}, {"kunde@example.test", r.mail.customerPW}} {
		imapErr, smtpErr := mail.Check(ctx, mail.Config{Timeout: 10 * time.Second},
			mail.Server{URL: "imap://" + r.mail.imapAddr, Username: acc.user, Password: acc.pw},
			mail.Server{URL: "smtp://" + r.mail.smtpAddr, Username: acc.user, Password: acc.pw})
		if imapErr != nil || smtpErr != nil {
			t.Errorf("%s with the printed settings: IMAP %v, SMTP %v", acc.user, imapErr, smtpErr)
		}
	}
}

// checkInbound mails the team as the demo customer, over the printed SMTP server, and waits
// for the message in GET /email-threads: the demo mailbox is synced (MAIL_SYNC_EVERY 15s in dev)
// without any step beyond `brokerdesk dev`. Bugs it would catch: dev not scheduling the demo
// company's sync, or the mailbox pointing at a server other than the running one.
func (r *devRun) checkInbound(ctx context.Context, t *testing.T) {
	t.Helper()
	raw := "From: Kunde <kunde@example.test>\r\nTo: team@demo-makler.test\r\nSubject: Frage zur Police\r\n" +
		"Message-ID: <devrun-1@example.test>\r\nDate: Mon, 07 Dec 2026 10:00:00 +0100\r\n\r\nGuten Tag, eine Frage.\r\n"
	if err := mail.Send(ctx, mail.Config{Timeout: 10 * time.Second},
		mail.Server{URL: "smtp://" + r.mail.smtpAddr, Username: "kunde@example.test", Password: r.mail.customerPW},
		"kunde@example.test", []string{"team@demo-makler.test"}, []byte(raw)); err != nil {
		t.Fatalf("mail the team as the customer: %v", err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		req, _ := http.NewRequest("GET", "http://"+r.addr+"/api/public/v1/email-threads", nil)
		req.Header.Set("Authorization", "Bearer "+r.keys["sk_live"])
		resp, err := apitest.Client(t).Do(req)
		if err != nil {
			t.Fatalf("GET /email-threads: %v", err)
		}
		var page struct {
			Data []struct {
				Subject string `json:"subject"`
			} `json:"data"`
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if resp.StatusCode != 200 || err != nil {
			t.Fatalf("GET /email-threads: status %d (%v), want 200", resp.StatusCode, err)
		}
		if len(page.Data) > 0 && page.Data[0].Subject == "Frage zur Police" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the customer's mail is not in GET /email-threads after 60s: %+v\nstderr:\n%s", page.Data, r.stderr.String())
		}
		time.Sleep(time.Second)
	}
}

// interrupt sends SIGINT, as Ctrl-C does, and wants exit status 0.
func (r *devRun) interrupt(t *testing.T) {
	t.Helper()
	if err := r.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-r.done:
		if err != nil {
			t.Fatalf("brokerdesk dev after SIGINT: %v, want exit status 0\nstderr:\n%s", err, r.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("brokerdesk dev did not exit within 30s of SIGINT\nstderr:\n%s", r.stderr.String())
	}
	r.cmd = nil
}

// kill ends a run the test left behind, and its postmaster, so the temp dir can go.
func (r *devRun) kill(dataDir string) {
	if r.cmd != nil && r.cmd.Process != nil {
		_ = r.cmd.Process.Signal(os.Interrupt)
		select {
		case <-r.done:
		case <-time.After(20 * time.Second):
			_ = r.cmd.Process.Kill()
		}
	}
	if b, err := os.ReadFile(filepath.Join(dataDir, "pg", "postmaster.pid")); err == nil {
		if pid, err := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0]); err == nil && pid > 0 {
			_ = syscall.Kill(pid, syscall.SIGINT) // fast shutdown
			for i := 0; i < 50 && syscall.Kill(pid, 0) == nil; i++ {
				time.Sleep(100 * time.Millisecond)
			}
		}
	}
}

// checkStopped wants the cluster down: postgres removes postmaster.pid when it stops.
func checkStopped(t *testing.T, dataDir string) {
	t.Helper()
	pidFile := filepath.Join(dataDir, "pg", "postmaster.pid")
	if _, err := os.Stat(pidFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s still exists after dev exited (err %v): the cluster did not stop", pidFile, err)
	}
}
