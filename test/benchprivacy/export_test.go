// Package benchprivacy measures a GDPR data export (issue 25): the ZIP of a contact with 1,000
// activities (notes) and 50 documents, from the request to the completed export, through the API
// and the job queue. Its own package, run once (-benchtime 1x): the fixture takes a minute.
package benchprivacy

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"mime/multipart"
	"net/textproto"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/app/operator"
	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

type idOnly struct {
	ID string `json:"id"`
}

type request struct {
	ID     string  `json:"id"`
	Status string  `json:"status"`
	Size   *int64  `json:"size"`
	Error  *string `json:"error"`
}

// document is a 64 KiB PDF-looking file (the upload sniffs the type; the export copies the
// bytes) whose body does not compress, as a real PDF's streams do not.
func document(i int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%%PDF-1.4\n%% Versicherungsschein %d\n", i)
	body := make([]byte, 64<<10)
	rng := rand.New(rand.NewPCG(uint64(i), 25))
	for j := range body {
		body[j] = byte(rng.Uint32())
	}
	b.Write(body)
	b.WriteString("\n%%EOF\n")
	return b.Bytes()
}

// BenchmarkExport_1000Activities50Documents: seconds from POST …/privacy/data-export to the
// request's status completed, and the ZIP's size. Env: PRIVACY_BENCH_NOTES (default 1,000),
// PRIVACY_BENCH_DOCUMENTS (default 50).
func BenchmarkExport_1000Activities50Documents(b *testing.B) {
	notes, docs := envInt(b, "PRIVACY_BENCH_NOTES", 1000), envInt(b, "PRIVACY_BENCH_DOCUMENTS", 50)
	env := apitest.New(b)
	if err := env.Server.StartJobs(context.Background()); err != nil {
		b.Fatalf("start jobs: %v", err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		_ = env.Server.StopJobs(ctx)
	})
	co := env.NewCompany(b)
	contact := apitest.Create[idOnly](b, env, co.Secret, "/contacts", map[string]any{"type": "private",
		"firstName": "Erika", "lastName": "Mustermann", "email": "erika@kunde.test",
		"phones": []map[string]any{{"number": "0171 1234567"}}}).ID
	// The fixture is written through the API with four company keys in turn: one key may make
	// 600 requests a minute (the spec's quota), the fixture takes more.
	keys := []string{co.Secret}
	for range 3 {
		keys = append(keys, co.Key(b, operator.NewKeyInput{Kind: tenancy.KindSecret, Env: tenancy.EnvLive}).Secret)
	}
	start := time.Now()
	for i := range notes {
		r := env.Do(b, apitest.Request{Method: "POST", Path: "/contacts/" + contact + "/notes", Key: keys[i%len(keys)],
			Body: map[string]any{"content": fmt.Sprintf("Telefonat %d mit Frau Mustermann über die Hausratversicherung", i)}})
		if r.Status != 201 {
			b.Fatalf("note %d: %d %s", i, r.Status, r.Body)
		}
	}
	for i := range docs {
		upload(b, env, keys[i%len(keys)], contact, fmt.Sprintf("police-%d.pdf", i), document(i))
	}
	b.Logf("fixture: %d notes and %d documents of 64 KiB in %v", notes, docs, time.Since(start).Round(time.Millisecond))

	for b.Loop() {
		t0 := time.Now()
		r := env.Do(b, apitest.Request{Method: "POST", Path: "/contacts/" + contact + "/privacy/data-export", Key: co.Secret})
		if r.Status != 202 {
			b.Fatalf("export: %d %s", r.Status, r.Body)
		}
		var req request
		r.Decode(b, &req)
		done := await(b, env, co.Secret, contact, req.ID)
		if done.Status != "completed" {
			b.Fatalf("export %s ended %s: %v", req.ID, done.Status, done.Error)
		}
		el := time.Since(t0)
		size := int64(0)
		if done.Size != nil {
			size = *done.Size
		}
		b.ReportMetric(el.Seconds(), "s/export")
		b.ReportMetric(float64(size)/(1<<20), "MiB/zip")
		b.Logf("export of %d activities and %d documents: %v, ZIP %.1f MiB", notes, docs, el.Round(time.Millisecond), float64(size)/(1<<20))
	}
}

// await polls the request list every 50 ms until the request ended (5 minutes at most). The
// poll adds at most 50 ms to the figure.
func await(b *testing.B, env *apitest.Env, key, contact, id string) request {
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		p := apitest.Get[apitest.Page[request]](b, env, key, "/privacy-requests?contactId="+contact)
		for _, r := range p.Data {
			if r.ID == id && (r.Status == "completed" || r.Status == "failed") {
				return r
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.Fatalf("export %s has not ended after 5 minutes", id)
	return request{}
}

func upload(b *testing.B, env *apitest.Env, key, contact, name string, content []byte) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	_ = w.WriteField("type", "policy")
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename="`+name+`"`)
	h.Set("Content-Type", "application/pdf")
	fw, _ := w.CreatePart(h)
	_, _ = fw.Write(content)
	_ = w.Close()
	r := env.Do(b, apitest.Request{Method: "POST", Path: "/contacts/" + contact + "/documents", Key: key, Body: buf.Bytes(),
		Header: map[string]string{"Content-Type": w.FormDataContentType()}})
	if r.Status != 201 {
		b.Fatalf("upload %s: %d %s", name, r.Status, r.Body)
	}
}

func envInt(b *testing.B, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		b.Fatalf("%s=%q", name, s)
	}
	return n
}
