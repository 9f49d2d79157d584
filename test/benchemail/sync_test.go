package benchemail

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"runtime/metrics"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/app/emails"
	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/app/platform/blobstore"
	"github.com/brokerdesk/brokerdesk/app/platform/mail"
	"github.com/brokerdesk/brokerdesk/app/platform/mailserver"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// BenchmarkMailboxSync: the initial IMAP sync of a mailbox of EMAIL_BENCH_SYNC_MESSAGES
// messages (default 10,000) from the loopback IMAP server, then an incremental sync with
// nothing new (issue 21: messages per second and bounded peak memory; the incremental sync
// costs one round of UID checks). The messages are generated: two in three reply to the one
// before (In-Reply-To and References), four in five come from one of 500 contacts (linked),
// one in five has an HTML part, one in a hundred a 40 KB PDF. The sync runs as the job runs
// it (emails.Module.SyncMailbox: batches of 100, each one transaction) on a module built like
// the server's, through a proxy that counts the IMAP commands the client sends. Memory: the
// peak of the live heap above the heap before the sync (sampled every 20 ms) and the process's
// peak RSS during the sync (VmHWM, reset before through /proc/self/clear_refs); the in-process
// IMAP server holds the whole mailbox in memory before the sync starts, so the RSS includes
// it, the heap growth does not.
func BenchmarkMailboxSync(b *testing.B) {
	n := envInt(b, "EMAIL_BENCH_SYNC_MESSAGES", 10_000)
	env := apitest.New(b)
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
	proxy := countIMAP(b, srv.IMAPAddr())
	box, err := env.Ops.CreateMailbox(ctx, env.Config.DataKeys, operator.NewMailbox{CompanyID: co.ID, Email: addr, Label: "Team",
		IMAPURL: "imap://" + proxy.addr, SMTPURL: srv.SMTPURL(), Username: addr, Password: password, Shared: true})
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	var bytesIn int
	for i := range n {
		raw := syncMessage(i, addr)
		bytesIn += len(raw)
		if err := srv.Deliver(addr, raw); err != nil {
			b.Fatal(err)
		}
	}
	fmt.Printf("mailbox sync bench: delivered %d messages (%.1f MB) in %s; load %s\n", n, float64(bytesIn)/(1<<20),
		time.Since(t0).Round(time.Millisecond), loadavg())
	mod := syncModule(b, env)

	b.ResetTimer()
	for b.Loop() {
		// initial sync
		proxy.reset()
		var before runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		resetPeakRSS()
		rssBefore := procStatus("VmRSS")
		heap := watchHeap()
		t0 = time.Now()
		// BeforeCommit marks each batch: the time per 1,000 messages must not grow with the tables.
		var marks []time.Duration
		rep, err := mod.SyncMailbox(ctx, co.ID, box.ID, emails.SyncOptions{BeforeCommit: func(context.Context, string, uint32) {
			marks = append(marks, time.Since(t0))
		}})
		initial := time.Since(t0)
		heap.stop()
		hwm := procStatus("VmHWM")
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		if err != nil {
			b.Fatalf("initial sync: %v", err)
		}
		if rep.Fetched != n || rep.Stored != n {
			b.Fatalf("initial sync: %+v, want %d fetched and stored", rep, n)
		}
		initialCmds := proxy.commands()

		// incremental sync, nothing new
		proxy.reset()
		t0 = time.Now()
		rep2, err := mod.SyncMailbox(ctx, co.ID, box.ID, emails.SyncOptions{})
		incremental := time.Since(t0)
		if err != nil {
			b.Fatalf("incremental sync: %v", err)
		}
		if rep2.Fetched != 0 {
			b.Fatalf("incremental sync fetched %d", rep2.Fetched)
		}
		incCmds := proxy.commands()
		b.StopTimer() // the counts and the report are not the sync

		var threads, links, atts int
		if err := env.OwnerDB.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM email_threads WHERE company_id = $1),
				(SELECT count(*) FROM email_links WHERE company_id = $1), (SELECT count(*) FROM email_attachments WHERE company_id = $1)`,
			co.ID).Scan(&threads, &links, &atts); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(n)/initial.Seconds(), "initial-msgs/s")
		b.ReportMetric(float64(heap.peak-heap.base)/(1<<20), "initial-live-heap-growth-MB")
		b.ReportMetric(float64(heap.peakObjs-heap.baseObjs)/(1<<20), "initial-heap-growth-MB")
		b.ReportMetric(float64(hwm)/1024, "initial-peak-RSS-MB")
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(n)/1024, "initial-alloc-KB/msg")
		b.ReportMetric(ms(incremental), "incremental-ms")
		b.ReportMetric(float64(total(incCmds)), "incremental-imap-commands")
		b.ReportMetric(float64(rep2.Selects), "incremental-selects")
		fmt.Printf("mailbox sync bench: initial %d messages in %s: %.0f messages/s (%.2f MB/s); %d threads, %d links, %d attachments\n",
			n, initial.Round(time.Millisecond), float64(n)/initial.Seconds(), float64(bytesIn)/(1<<20)/initial.Seconds(), threads, links, atts)
		fmt.Printf("mailbox sync bench: initial: heap live after GC %.1f MB before, peak %.1f MB (growth %.1f MB); heap objects %.1f MB before, peak %.1f MB; RSS %.1f MB before, peak %.1f MB; allocated %.1f KB per message; %d GCs\n",
			mb(heap.base), mb(heap.peak), mb(heap.peak-heap.base), mb(heap.baseObjs), mb(heap.peakObjs), float64(rssBefore)/1024, float64(hwm)/1024,
			float64(after.TotalAlloc-before.TotalAlloc)/float64(n)/1024, after.NumGC-before.NumGC)
		fmt.Printf("mailbox sync bench: initial: IMAP commands %s; report %+v\n", describe(initialCmds), rep)
		var per []string // seconds per 1,000 messages, each tenth of the sync (batches of 100)
		step := max(len(marks)/10, 1)
		var prev time.Duration
		for i := step - 1; i < len(marks); i += step {
			per = append(per, fmt.Sprintf("%.1f", (marks[i]-prev).Seconds()*10/float64(step)))
			prev = marks[i]
		}
		fmt.Printf("mailbox sync bench: initial: seconds per 1,000 messages in each tenth: %s\n", strings.Join(per, ", "))
		fmt.Printf("mailbox sync bench: incremental (nothing new) %s: IMAP commands %s; report %+v; load %s\n",
			incremental.Round(time.Microsecond), describe(incCmds), rep2, loadavg())
		b.StartTimer()
	}
}

func mb(n uint64) float64 { return float64(n) / (1 << 20) }

// syncModule is an e-mail module on the benchmark's database as the server builds it (the
// jobs role's pool, the server's blob storage and data keys), as test/mailsync builds it.
func syncModule(b *testing.B, env *apitest.Env) *emails.Module {
	b.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, env.Config.JobsDatabaseURL)
	if err != nil {
		b.Fatal(err)
	}
	bucket, err := blobstore.Open(ctx, env.Config.BlobURL)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = bucket.Close(); pool.Close() })
	db := ent.NewClient(ent.Driver(tenancy.NewDriver(stdlib.OpenDBFromPool(pool))))
	return emails.New(emails.Deps{Pool: pool, DB: db, Bucket: bucket, Events: events.NewService(),
		Keys: env.Config.DataKeys, Mail: mail.Config{Timeout: 30 * time.Second}, Now: time.Now, Log: zerolog.Nop()})
}

var syncSubjects = []string{"Ihre Hausratversicherung", "Schadenmeldung Wasserschaden", "Beitragsanpassung zum 01.01.",
	"Termin zur Jahresberatung", "Unterlagen Kfz-Versicherung", "Änderung der Bankverbindung",
	"Angebot Berufsunfähigkeitsversicherung", "Rückfrage zum Antrag", "Police Wohngebäudeversicherung",
	"Nachtrag zur Haftpflicht", "Beitragsrechnung", "Vertragsübersicht", "Adressänderung",
	"Fragen zur Rentenversicherung", "Zahnzusatzversicherung", "Reiseversicherung für den Urlaub"}

var syncSentences = []string{"anbei erhalten Sie die Unterlagen zu meiner Versicherung.",
	"bitte senden Sie mir eine Bestätigung der Kündigung.", "der Schaden vom letzten Wochenende ist inzwischen behoben.",
	"warum ist der Beitrag für das kommende Jahr gestiegen?", "können wir nächste Woche einen Termin vereinbaren?",
	"die Rechnung des Handwerkers liegt bei.", "vielen Dank für Ihre schnelle Antwort.",
	"meine Bankverbindung hat sich geändert, die neue IBAN steht unten."}

// pdf is the attachment of one message in a hundred: 40 KB that sniff as a PDF.
var pdf = func() []byte {
	b := []byte("%PDF-1.4\n")
	for len(b) < 40<<10 {
		b = append(b, []byte(fmt.Sprintf("%d 0 obj << /Length 44 >> stream BT /F1 12 Tf 72 712 Td (Seite) Tj ET endstream endobj\n", len(b)))...)
	}
	return b
}()

// syncMessage is generated message i delivered to addr: message i replies to i-1 unless
// i % 3 = 0 (threads of three), from contact kunde<k>@example.com (k < 500) four times in
// five, else from a stranger; HTML alternative when i % 5 = 0, a PDF when i % 100 = 7.
func syncMessage(i int, addr string) []byte {
	id := func(k int) string { return fmt.Sprintf("<sync%d@kunden.example>", k) }
	from := fmt.Sprintf("kunde%d@example.com", (i/3)%500)
	if i%5 == 4 {
		from = fmt.Sprintf("anfrage%d@web.example", i)
	}
	subject := fmt.Sprintf("%s (Vorgang %d)", syncSubjects[(i/3)%len(syncSubjects)], 200000+i/3)
	var w bytes.Buffer
	fmt.Fprintf(&w, "Message-ID: %s\r\n", id(i))
	if i%3 != 0 {
		subject = "AW: " + subject
		refs := []string{}
		for k := i - i%3; k < i; k++ {
			refs = append(refs, id(k))
		}
		fmt.Fprintf(&w, "In-Reply-To: %s\r\nReferences: %s\r\n", id(i-1), strings.Join(refs, " "))
	}
	fmt.Fprintf(&w, "Date: %s\r\n", time.Date(2026, 1, 1, 8, 0, 0, 0, time.UTC).Add(time.Duration(i)*7*time.Minute).Format(time.RFC1123Z))
	fmt.Fprintf(&w, "From: Kunde %d <%s>\r\nTo: Team <%s>\r\n", i%500, from, addr)
	fmt.Fprintf(&w, "Subject: =?utf-8?q?%s?=\r\nMIME-Version: 1.0\r\n", qEncode(subject))
	text := fmt.Sprintf("Guten Tag,\r\n\r\n%s %s\r\n\r\nMit freundlichen Grüßen\r\nKunde %d\r\nLindenallee %d, 50667 Köln\r\nIBAN DE02 1203 0000 0000 2020 51\r\n",
		syncSentences[i%len(syncSentences)], syncSentences[(i/7)%len(syncSentences)], i%500, 1+i%120)
	if i%3 != 0 {
		text += "\r\n> Am Vortag schrieb das Team:\r\n> vielen Dank, wir kümmern uns darum und melden uns.\r\n"
	}
	body := "Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n" + text
	if i%5 == 0 {
		html := "<html><body><p>" + strings.ReplaceAll(text, "\r\n", "<br>") + "</p><script>alert(1)</script><img src=\"https://tracker.example/p.gif\"></body></html>"
		body = "Content-Type: multipart/alternative; boundary=\"alt\"\r\n\r\n--alt\r\n" + body + "\r\n--alt\r\n" +
			"Content-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n" + html + "\r\n--alt--\r\n"
	}
	if i%100 == 7 {
		enc := base64.StdEncoding.EncodeToString(pdf)
		var lines strings.Builder
		for len(enc) > 76 {
			lines.WriteString(enc[:76] + "\r\n")
			enc = enc[76:]
		}
		lines.WriteString(enc + "\r\n")
		body = "Content-Type: multipart/mixed; boundary=\"mix\"\r\n\r\n--mix\r\n" + body + "\r\n--mix\r\n" +
			"Content-Type: application/pdf; name=\"Rechnung.pdf\"\r\nContent-Disposition: attachment; filename=\"Rechnung.pdf\"\r\n" +
			"Content-Transfer-Encoding: base64\r\n\r\n" + lines.String() + "--mix--\r\n"
	}
	w.WriteString(body)
	return w.Bytes()
}

// qEncode is s as the encoded text of a Q-encoded word (RFC 2047).
func qEncode(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		switch {
		case c == ' ':
			b.WriteByte('_')
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == ':', c == '(', c == ')', c == '-':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "=%02X", c)
		}
	}
	return b.String()
}

// imapCounter is a TCP proxy in front of the IMAP server that counts the commands clients send
// (a line from the client that starts with a tag), by command name.
type imapCounter struct {
	addr string
	mu   sync.Mutex
	cmds map[string]int
}

func countIMAP(b *testing.B, target string) *imapCounter {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = ln.Close() })
	p := &imapCounter{addr: ln.Addr().String(), cmds: map[string]int{}}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c, target)
		}
	}()
	return p
}

func (p *imapCounter) serve(c net.Conn, target string) {
	defer c.Close()
	s, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer s.Close()
	go func() { _, _ = io.Copy(c, s); _ = c.Close() }()
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			// "tag COMMAND ..." (a UID command counts as UID FETCH, UID SEARCH)
			f := strings.Fields(string(line))
			if len(f) >= 2 {
				name := strings.ToUpper(f[1])
				if name == "UID" && len(f) >= 3 {
					name += " " + strings.ToUpper(f[2])
				}
				p.mu.Lock()
				p.cmds[name]++
				p.mu.Unlock()
			}
			if _, werr := s.Write(line); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *imapCounter) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cmds = map[string]int{}
}

func (p *imapCounter) commands() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[string]int, len(p.cmds))
	for k, v := range p.cmds {
		out[k] = v
	}
	return out
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// describe is "12 (LOGIN 1, SELECT 2, ...)".
func describe(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return fmt.Sprintf("%d (%s)", total(m), strings.Join(parts, ", "))
}

// heapPeak samples the heap every 20 ms until stopped: the heap marked live by the last GC
// (what the process retains: it must not grow with the mailbox) and the heap's objects live
// or not yet swept (what GOGC lets it reach between collections).
type heapPeak struct {
	done               chan struct{}
	wg                 sync.WaitGroup
	base, peak         uint64 // live after GC
	baseObjs, peakObjs uint64 // objects, swept or not
}

func watchHeap() *heapPeak {
	runtime.GC()
	h := &heapPeak{done: make(chan struct{})}
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	h.base, h.baseObjs = s[0].Value.Uint64(), s[1].Value.Uint64()
	h.wg.Go(func() {
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			h.peak = max(h.peak, s[0].Value.Uint64())
			h.peakObjs = max(h.peakObjs, s[1].Value.Uint64())
			select {
			case <-h.done:
				return
			case <-t.C:
			}
		}
	})
	return h
}

// stop ends the sampling.
func (h *heapPeak) stop() {
	close(h.done)
	h.wg.Wait()
}

// resetPeakRSS resets the process's VmHWM to its current RSS (Linux: clear_refs 5).
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// procStatus is a kB field of /proc/self/status (0 where there is none).
func procStatus(field string) int64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			var kb int64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb)
			return kb
		}
	}
	return 0
}
