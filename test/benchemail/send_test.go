package benchemail

import (
	"context"
	"crypto/md5"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/app/platform/mail"
	"github.com/brokerdesk/brokerdesk/app/platform/mailserver"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// BenchmarkSend: POST /emails to the loopback SMTP server (issue 21: sends per second,
// p50/p99). A company with points, a shared mailbox on the loopback mail server and 500
// contacts; the server serves on a loopback listener with its jobs running (the send worker
// delivers over SMTP and appends a copy to the Sent folder over IMAP). Two phases of
// EMAIL_BENCH_SENDS sends each (default 500), each send a plain-text message of about 600
// characters to one contact, linked to it (contactId), with a fresh Idempotency-Key:
// "sequential" (one client: the API's p50/p99) and "concurrent" (4 clients). Each phase's
// end-to-end rate runs from its first POST until the SMTP server has accepted all its
// messages (mailserver.WaitReceived).
func BenchmarkSend(b *testing.B) {
	n := envInt(b, "EMAIL_BENCH_SENDS", 500)
	env := apitest.New(b, app.WithMail(mail.Config{Timeout: 30 * time.Second}))
	ctx := context.Background()
	co := env.NewCompany(b, "emails")
	seedContacts(b, env, co.ID, []uuid.UUID{co.Admin.ID}, 500)
	srv, err := mailserver.Start(mailserver.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = srv.Close() })
	const addr, password = "team@makler-bench.test", "postfach-geheim-1"
	if err := srv.AddUser(addr, password); err != nil {
		b.Fatal(err)
	}
	box, err := env.Ops.CreateMailbox(ctx, env.Config.DataKeys, operator.NewMailbox{CompanyID: co.ID, Email: addr, Label: "Team",
		IMAPURL: srv.IMAPURL(), SMTPURL: srv.SMTPURL(), Username: addr, Password: password, Shared: true})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := env.Ops.GrantPoints(ctx, co.ID, int64(4*n+10), "bench"); err != nil {
		b.Fatal(err)
	}
	base := serve(b, env) // starts the jobs
	keys := &userKeys{co: co, user: co.Admin}
	var keyMu sync.Mutex
	key := func() string { keyMu.Lock(); defer keyMu.Unlock(); return keys.next(b) }

	sent := 0
	send := func(i int) time.Duration {
		c := (i%500 + 500) % 500
		sum := md5.Sum([]byte(co.ID.String() + "c" + fmt.Sprint(c)))
		body, _ := json.Marshal(map[string]any{
			"mailboxId": box.ID, "contactId": uuid.UUID(sum).String(),
			"to":      []map[string]string{{"email": fmt.Sprintf("kunde%d@example.com", c), "name": fmt.Sprintf("Kunde %d", c)}},
			"subject": fmt.Sprintf("Ihre Unterlagen zum Vorgang %d", 300000+i),
			"text": "Guten Tag,\n\nanbei erhalten Sie die gewünschten Unterlagen zu Ihrer Hausratversicherung. " +
				"Bitte prüfen Sie die Angaben und senden Sie uns das unterschriebene Formular bis Monatsende zurück. " +
				"Bei Fragen erreichen Sie uns montags bis freitags von 9 bis 17 Uhr.\n\n" +
				"Mit freundlichen Grüßen\nIhr Team der Makler Bench GmbH\nHauptstraße 1, 10115 Berlin\nTelefon 030 1234567\n",
		})
		k := key()
		t0 := time.Now()
		st, got := call(b, "POST", base+"/emails", k, uuid.NewString(), string(body))
		d := time.Since(t0)
		if st != 201 {
			b.Fatalf("POST /emails: %d %s", st, got)
		}
		return d
	}
	// phase sends n messages with clients concurrent clients; it returns the POST latencies
	// and the time from the first POST until the SMTP server holds them all.
	phase := func(name string, clients int) {
		lat := make([]time.Duration, n)
		first := sent
		t0 := time.Now()
		var wg sync.WaitGroup
		for w := range clients {
			wg.Go(func() {
				for i := w; i < n; i += clients {
					lat[i] = send(first + i)
				}
			})
		}
		wg.Wait()
		posted := time.Since(t0)
		sent += n
		wctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
		defer cancel()
		if _, err := srv.WaitReceived(wctx, sent); err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		e2e := time.Since(t0)
		p50, p99 := percentiles(lat)
		b.ReportMetric(ms(p50), name+"-post-p50-ms")
		b.ReportMetric(ms(p99), name+"-post-p99-ms")
		b.ReportMetric(float64(n)/posted.Seconds(), name+"-posts/s")
		b.ReportMetric(float64(n)/e2e.Seconds(), name+"-sends/s")
		fmt.Printf("send bench: %s (%d clients): %d POSTs in %s (%.1f/s): p50 %.2f ms, p99 %.2f ms; all received by SMTP after %s: %.1f sends/s end to end; load %s\n",
			name, clients, n, posted.Round(time.Millisecond), float64(n)/posted.Seconds(), ms(p50), ms(p99), e2e.Round(time.Millisecond),
			float64(n)/e2e.Seconds(), loadavg())
	}
	send(-1) // warm-up: plans, connections, the worker's first SMTP login
	sent = 1
	if _, err := srv.WaitReceived(ctx, 1); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		phase("sequential", 1)
		phase("concurrent", 4)
	}
	b.StopTimer()
	var statuses string
	if err := env.OwnerDB.QueryRowContext(ctx, `SELECT string_agg(status || ' ' || c, ', ') FROM
			(SELECT status, count(*) c FROM emails WHERE company_id = $1 GROUP BY status ORDER BY status) s`, co.ID).Scan(&statuses); err != nil {
		b.Fatal(err)
	}
	fmt.Printf("send bench: e-mails by status at the end: %s\n", statuses)
}
