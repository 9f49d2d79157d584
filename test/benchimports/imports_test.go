// Package benchimports measures a contact import of a large generated CSV through the API and
// the job queue: upload and analysis, then the commit. Its own package (run once, -benchtime
// 1x): one run takes minutes and must not be repeated by a -benchtime meant for request
// benchmarks.
package benchimports

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"mime/multipart"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/app/contacts"
	"github.com/brokerdesk/brokerdesk/app/events"
	"github.com/brokerdesk/brokerdesk/app/imports"
	"github.com/brokerdesk/brokerdesk/app/platform/blobstore"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/contactimport"
	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
	"github.com/brokerdesk/brokerdesk/test/memwatch"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

type importJob struct {
	ID            string         `json:"id"`
	Status        string         `json:"status"`
	Error         *string        `json:"error"`
	RowCount      int            `json:"rowCount"`
	RowCounts     map[string]int `json:"rowCounts"`
	OutcomeCounts map[string]int `json:"outcomeCounts"`
	Committed     int            `json:"committed"`
}

// generate writes a German contact export of n rows: names, e-mail, address, date of birth,
// phone, IBAN; every 50th row repeats an earlier row's e-mail (a duplicate within the file).
func generate(n int) []byte {
	var b bytes.Buffer
	b.WriteString("Anrede;Vorname;Nachname;E-Mail;Straße;PLZ;Ort;Geburtsdatum;Telefon;IBAN\r\n")
	for i := range n {
		mail := i
		if i%50 == 49 {
			mail = i - 1
		}
		fmt.Fprintf(&b, "%s;Vorname%d;Müller-%d;kunde%d@bench.test;Hauptstraße %d;%05d;Köln;%02d.%02d.%d;0221 %07d;DE89370400440532013000\r\n",
			[]string{"Herr", "Frau"}[i%2], i, i, mail, i%200+1, 10000+i%89999, i%28+1, i%12+1, 1940+i%60, i)
	}
	return b.Bytes()
}

// BenchmarkImport uploads a generated CSV of IMPORT_BENCH_ROWS rows (default 100,000) to a new
// company, waits for the analysis, commits it (duplicates skip) and waits for the commit:
// rows/s of each phase, the process's peak live heap per phase and its peak RSS (VmHWM).
func BenchmarkImport(b *testing.B) {
	n := 100_000
	if s := os.Getenv("IMPORT_BENCH_ROWS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			b.Fatalf("IMPORT_BENCH_ROWS=%q", s)
		}
		n = v
	}
	env := apitest.New(b, app.WithClock(time.Now)) // a private server with its own workers
	ctx := context.Background()
	if err := env.Server.StartJobs(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = env.Server.StopJobs(context.Background()) })
	co := env.NewCompany(b)
	file := generate(n)
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", "kontakte.csv")
	_, _ = fw.Write(file)
	_ = mw.Close()
	await := func(id string, want ...string) importJob {
		for {
			var im importJob
			r := env.Do(b, apitest.Request{Path: "/imports/" + id, Key: co.Secret})
			r.Decode(b, &im)
			for _, w := range want {
				if im.Status == w {
					return im
				}
			}
			if im.Status == "failed" {
				b.Fatalf("import failed: %s", r.Body)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	fmt.Printf("imports bench: %d rows, %.1f MiB\n", n, float64(len(file))/(1<<20))
	b.ResetTimer()

	heap := memwatch.Start()
	t0 := time.Now()
	r := env.Do(b, apitest.Request{Method: "POST", Path: "/imports", Key: co.Secret, Body: body.Bytes(),
		Header: map[string]string{"Content-Type": mw.FormDataContentType()}})
	if r.Status != 202 {
		b.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	var im importJob
	r.Decode(b, &im)
	im = await(im.ID, "analyzed")
	analyze := time.Since(t0)
	analyzeHeap := heap.MB()
	if im.RowCount != n {
		b.Fatalf("analysed %d rows of %d: %v", im.RowCount, n, im.RowCounts)
	}

	heap = memwatch.Start()
	t0 = time.Now()
	if r := env.Do(b, apitest.Request{Method: "POST", Path: "/imports/" + im.ID + "/commit", Key: co.Secret}); r.Status != 202 {
		b.Fatalf("commit: %d %s", r.Status, r.Body)
	}
	im = await(im.ID, "completed")
	commit := time.Since(t0)
	commitHeap := heap.MB()
	b.StopTimer()
	if im.Committed != n || im.OutcomeCounts["created"]+im.OutcomeCounts["duplicate"]+im.OutcomeCounts["skipped"] != n {
		b.Fatalf("committed: %+v", im)
	}
	b.ReportMetric(float64(n)/analyze.Seconds(), "analyze-rows/s")
	b.ReportMetric(float64(n)/commit.Seconds(), "commit-rows/s")
	b.ReportMetric(analyzeHeap, "analyze-peak-heap-MiB")
	b.ReportMetric(commitHeap, "commit-peak-heap-MiB")
	b.ReportMetric(memwatch.RSSPeakMB(), "peak-RSS-MiB")
	fmt.Printf("imports bench: upload+analysis %s (%.0f rows/s, peak heap %.1f MiB; counts %v); commit %s (%.0f rows/s, peak heap %.1f MiB; outcomes %v); process peak RSS %.1f MiB\n",
		analyze.Round(time.Millisecond), float64(n)/analyze.Seconds(), analyzeHeap, im.RowCounts,
		commit.Round(time.Millisecond), float64(n)/commit.Seconds(), commitHeap, im.OutcomeCounts, memwatch.RSSPeakMB())
}

// BenchmarkImport_200MB stores a 200 MB CSV (about 1.6 million rows, 16 times the row limit)
// and runs its analysis (imports.Module.Run, as the job does): it must fail at row 100,001
// with the limit's message, reading the file as a stream: the peak live heap stays that of a
// 100,000-row analysis, far below the file's size (issue 25: "a 200 MB file (bounded memory)").
func BenchmarkImport_200MB(b *testing.B) {
	env := apitest.New(b, app.WithClock(time.Now)) // no workers: this benchmark runs the step
	ctx := context.Background()
	co := env.NewCompany(b)
	bucket, err := blobstore.Open(ctx, env.Config.BlobURL)
	if err != nil {
		b.Fatal(err)
	}
	defer bucket.Close()
	key := blobstore.NewKey("imports", co.ID)
	w, err := bucket.NewWriter(ctx, key, nil)
	if err != nil {
		b.Fatal(err)
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	size := 0
	n, _ := bw.WriteString("Vorname;Nachname;E-Mail;Straße;PLZ;Ort\n")
	size += n
	for i := 0; size < 200<<20; i++ {
		n, _ = fmt.Fprintf(bw, "Vorname%d;Nachname%d;k%d@big.test;Hauptstraße %d;%05d;Köln\n", i, i, i, i%300, 10000+i%89999)
		size += n
	}
	if err := errors.Join(bw.Flush(), w.Close()); err != nil {
		b.Fatal(err)
	}
	var id uuid.UUID
	env.InCompany(b, co.ID, func(ctx context.Context, db *ent.Client) error {
		im, err := db.ContactImport.Create().SetFormat(contactimport.FormatCsv).SetContactType(contactimport.ContactTypePrivate).
			SetFilename("gross.csv").SetSize(int64(size)).SetSha256(strings.Repeat("0", 64)).SetBlobKey(key).Save(ctx)
		if err == nil {
			id = im.ID
		}
		return err
	})
	pool, err := pgxpool.New(ctx, env.Config.JobsDatabaseURL)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	m := imports.New(imports.Deps{Pool: pool, DB: ent.NewClient(ent.Driver(tenancy.NewDriver(stdlib.OpenDBFromPool(pool)))),
		Bucket: bucket, Contacts: contacts.NewService(events.NewService(), env.Config.DataKeys, time.Now)})
	fmt.Printf("imports bench: %.1f MiB file\n", float64(size)/(1<<20))
	b.ResetTimer()
	heap := memwatch.Start()
	t0 := time.Now()
	if err := m.Run(ctx, imports.Args{CompanyID: co.ID, ImportID: id}); err != nil {
		b.Fatal(err)
	}
	took := time.Since(t0)
	peak := heap.MB()
	b.StopTimer()
	im := apitest.Get[importJob](b, env, co.Secret, "/imports/"+id.String())
	if im.Status != "failed" || im.Error == nil || !strings.Contains(*im.Error, "more than 100000 data rows") {
		b.Fatalf("%+v", im)
	}
	b.ReportMetric(peak, "peak-heap-MiB")
	b.ReportMetric(memwatch.RSSPeakMB(), "peak-RSS-MiB")
	fmt.Printf("imports bench: 200 MB file refused after %s (%q); peak live heap %.1f MiB, process peak RSS %.1f MiB\n",
		took.Round(time.Millisecond), *im.Error, peak, memwatch.RSSPeakMB())
}
