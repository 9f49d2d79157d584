// Package benchimports measures a contact import of a large generated CSV through the API and
// the job queue: upload and analysis, then the commit. Its own package (run once, -benchtime
// 1x): one run takes minutes and must not be repeated by a -benchtime meant for request
// benchmarks.
package benchimports

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/test/apitest"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

// heapPeak samples the process's live heap every 50 ms until stopped: the peak while a phase
// runs (the server, its workers and this benchmark share the process).
type heapPeak struct {
	stop chan struct{}
	done sync.WaitGroup
	peak uint64
}

func watchHeap() *heapPeak {
	runtime.GC()
	h := &heapPeak{stop: make(chan struct{})}
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	h.done.Go(func() {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			h.peak = max(h.peak, s[0].Value.Uint64())
			select {
			case <-h.stop:
				return
			case <-t.C:
			}
		}
	})
	return h
}

func (h *heapPeak) MB() float64 {
	close(h.stop)
	h.done.Wait()
	return float64(h.peak) / (1 << 20)
}

// vmHWM is the process's peak resident set (VmHWM of /proc/self/status) in MiB; 0 where the
// file does not exist.
func vmHWM() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

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

	heap := watchHeap()
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

	heap = watchHeap()
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
	b.ReportMetric(vmHWM(), "peak-RSS-MiB")
	fmt.Printf("imports bench: upload+analysis %s (%.0f rows/s, peak heap %.1f MiB; counts %v); commit %s (%.0f rows/s, peak heap %.1f MiB; outcomes %v); process peak RSS %.1f MiB\n",
		analyze.Round(time.Millisecond), float64(n)/analyze.Seconds(), analyzeHeap, im.RowCounts,
		commit.Round(time.Millisecond), float64(n)/commit.Seconds(), commitHeap, im.OutcomeCounts, vmHWM())
}
