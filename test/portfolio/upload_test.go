package portfolio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
	"github.com/brokerdesk/brokerdesk/app/platform/blobstore"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

// streamedUpload posts a multipart body written on the fly (chunked, never whole in memory
// here either): the file part first, then the fields, or the fields first.
func streamedUpload(t testing.TB, base, key string, fields map[string]string, file io.Reader, fieldsFirst bool) (int, []byte) {
	t.Helper()
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		var err error
		writeFields := func() {
			for k, v := range fields {
				if err == nil {
					err = mw.WriteField(k, v)
				}
			}
		}
		if fieldsFirst {
			writeFields()
		}
		if err == nil {
			var fw io.Writer
			if fw, err = mw.CreateFormFile("file", "bestand.gdv"); err == nil {
				_, err = io.Copy(fw, file)
			}
		}
		if !fieldsFirst {
			writeFields()
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	req, _ := http.NewRequest("POST", base+app.V1Prefix+"/portfolio-transfers", pr)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("upload: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// blobs counts the portfolio blobs of a company.
func blobs(t *testing.T, env *apitest.Env, co *apitest.Company) int {
	t.Helper()
	ctx := context.Background()
	b, err := blobstore.Open(ctx, env.Config.BlobURL)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	n := 0
	it := b.List(&blob.ListOptions{Prefix: "portfolio/" + co.ID.String() + "/"})
	for {
		_, err := it.Next(ctx)
		if err == io.EOF {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
}

// TestPortfolio_LargeUpload: a 30 MB file, three times the 10 MiB of other requests, sent
// chunked with the file before the fields, is stored and validated.
func TestPortfolio_LargeUpload(t *testing.T) {
	env := setup(t)
	co := env.NewCompany(t)
	base := env.Listen(t)
	const contracts = 18000
	file, err := gdv.NewGenerated(gdv.GenerateOptions{Contracts: contracts, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	counted := &countingReader{r: file}
	status, body := streamedUpload(t, base, co.Secret, map[string]string{"format": "gdv_vu_vermittler", "source": "bestand"}, counted, false)
	if status != 202 {
		t.Fatalf("upload: %d %s", status, body)
	}
	if counted.n < 30<<20 {
		t.Fatalf("generated %d bytes, want at least 30 MiB", counted.n)
	}
	var tr struct {
		ID     string `json:"id"`
		Source string `json:"source"`
		File   struct {
			Size int64 `json:"size"`
		} `json:"file"`
	}
	if err := json.Unmarshal(body, &tr); err != nil {
		t.Fatal(err)
	}
	got := await(t, env, co.Secret, tr.ID, "validated", "failed")
	if got.Status != "validated" || got.Summary.Contracts != contracts || got.Summary.Packages[0].Check.Status != "consistent" {
		t.Errorf("got %s %d contracts %+v", got.Status, got.Summary.Contracts, got.Summary.Packages)
	}
	if tr.File.Size != counted.n {
		t.Errorf("stored %d bytes, sent %d", tr.File.Size, counted.n)
	}
	if tr.Source != "bestand" {
		t.Errorf("source %q: the fields after the file were not read", tr.Source)
	}
	if blobs(t, env, co) != 1 {
		t.Errorf("%d blobs, want 1", blobs(t, env, co))
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// TestPortfolio_UploadLimit: a request over PORTFOLIO_MAX_UPLOAD_MB (1 here) is 413 whether its
// Content-Length says so or it is chunked, the file before or after the fields, and no blob
// stays behind; under the limit, 11 MiB are taken (more than any other route takes).
func TestPortfolio_UploadLimit(t *testing.T) {
	env := apitest.New(t, app.WithConfig(func(c *app.Config) { c.PortfolioMaxUpload = 12 << 20 }))
	co := env.NewCompany(t)
	base := env.Listen(t)
	big := bytes.Repeat([]byte("0001"+strings.Repeat(" ", 252)+"\n"), (13<<20)/257)
	tooLarge := func(t *testing.T, status int, body []byte) {
		t.Helper()
		if status != 413 || !bytes.Contains(body, []byte(`"payload_too_large"`)) {
			t.Errorf("%d %s, want 413 payload_too_large", status, body)
		}
	}
	t.Run("content-length", func(t *testing.T) {
		body, ct := multipartBody(t, map[string]string{"format": "gdv_vu_vermittler"}, "big.gdv", big)
		r := env.Do(t, apitest.Request{Method: "POST", Path: "/portfolio-transfers", Key: co.Secret, Body: body,
			Header: map[string]string{"Content-Type": ct, "Idempotency-Key": "big-1"}})
		tooLarge(t, r.Status, r.Body)
		// The key stays free: a smaller body with it is taken.
		small, ct := multipartBody(t, map[string]string{"format": "gdv_vu_vermittler"}, "small.gdv", big[:11<<20])
		r = env.Do(t, apitest.Request{Method: "POST", Path: "/portfolio-transfers", Key: co.Secret, Body: small,
			Header: map[string]string{"Content-Type": ct, "Idempotency-Key": "big-1"}})
		if r.Status != 202 {
			t.Errorf("11 MiB: %d %s", r.Status, r.Body)
		}
	})
	t.Run("chunked, file first", func(t *testing.T) {
		status, body := streamedUpload(t, base, co.Secret, map[string]string{"format": "gdv_vu_vermittler"}, bytes.NewReader(big), false)
		tooLarge(t, status, body)
	})
	t.Run("chunked, fields first", func(t *testing.T) {
		status, body := streamedUpload(t, base, co.Secret, map[string]string{"format": "gdv_vu_vermittler"}, bytes.NewReader(big), true)
		tooLarge(t, status, body)
	})
	if n := blobs(t, env, co); n != 1 {
		t.Errorf("%d blobs, want 1 (the 11 MiB transfer's)", n)
	}
}

// TestBodyLimit_OtherRoutes: every other route keeps the 10 MiB limit: 413 from the
// Content-Length before the body is sent, and for a chunked body past 10 MiB; a chunked body
// under it is read as before.
func TestBodyLimit_OtherRoutes(t *testing.T) {
	env := setup(t)
	co := env.NewCompany(t)
	base := env.Listen(t)
	for _, path := range []string{app.V1Prefix + "/contacts", app.V1Prefix + "/leads/intake", "/api/public/leads", app.V1Prefix + "/portfolio-mappings"} {
		t.Run("announced "+path, func(t *testing.T) {
			// Headers and the body's first bytes only: the answer must come without the rest.
			conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
			fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer %s\r\n"+
				"X-API-Key: %s\r\nContent-Length: %d\r\n\r\n{\"notes\":\"", path, co.Secret, co.Publishable, 10<<20+1)
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 413 || !resp.Close {
				t.Errorf("%d close=%v %s", resp.StatusCode, resp.Close, b)
			}
		})
	}
	chunked := func(path string, body io.Reader) (int, []byte) {
		req, _ := http.NewRequest("POST", base+path, io.NopCloser(body)) // no length: chunked
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+co.Secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	pad := strings.Repeat("x", 10<<20)
	if status, b := chunked(app.V1Prefix+"/contacts", strings.NewReader(`{"type":"private","lastName":"`+pad+`"}`)); status != 413 ||
		!bytes.Contains(b, []byte(`"payload_too_large"`)) {
		t.Errorf("chunked 10 MiB+: %d %.200s", status, b)
	}
	if status, b := chunked(app.V1Prefix+"/contacts", strings.NewReader(`{"type":"private","firstName":"Jörg","lastName":"Groß"}`)); status != 201 {
		t.Errorf("chunked small: %d %s", status, b)
	}
	// A body of exactly 10 MiB is still read (the limit is inclusive): 422 for a too long name,
	// not 413.
	exact := `{"type":"private","lastName":"`
	exact += strings.Repeat("x", 10<<20-len(exact)-2) + `"}`
	if status, b := chunked(app.V1Prefix+"/contacts", strings.NewReader(exact)); status == 413 {
		t.Errorf("chunked 10 MiB: %d %.200s", status, b)
	}
}

// BenchmarkPortfolio_Upload posts a generated 100,000-contract GDV file (~175 MB) chunked to
// a real listener and reports the upload rate and the process's peak heap while it runs
// (sampled every 5 ms; client, generator and server share the process, so it bounds the
// server's share from above). The validation job is not waited for.
func BenchmarkPortfolio_Upload(b *testing.B) {
	env := setup(b)
	co := env.NewCompany(b)
	base := env.Listen(b)
	var peak uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
		}
	}()
	var bytesSent int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		file, err := gdv.NewGenerated(gdv.GenerateOptions{Contracts: 100000, Packages: 4, Seed: uint64(i + 1)})
		if err != nil {
			b.Fatal(err)
		}
		counted := &countingReader{r: file}
		if status, body := streamedUpload(b, base, co.Secret, map[string]string{"format": "gdv_vu_vermittler"}, counted, true); status != 202 {
			b.Fatalf("upload: %d %s", status, body)
		}
		bytesSent += counted.n
	}
	b.StopTimer()
	close(stop)
	<-done
	b.ReportMetric(float64(bytesSent)/(1<<20)/b.Elapsed().Seconds(), "MiB/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
}
