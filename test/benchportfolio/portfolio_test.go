// Package benchportfolio measures a portfolio transfer of a large generated GDV file through
// the job queue: validation, commit, and a re-import that changes nothing. Its own package
// (go tool task bench runs it once, -benchtime 1x): one run takes minutes and must not be
// repeated by a -benchtime meant for the request benchmarks of test/bench.
package benchportfolio

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/brokerdesk/brokerdesk/app"
	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
	"github.com/brokerdesk/brokerdesk/app/platform/blobstore"
	"github.com/brokerdesk/brokerdesk/app/platform/jobs"
	"github.com/brokerdesk/brokerdesk/app/portfolio"
	"github.com/brokerdesk/brokerdesk/tenancy"
	"github.com/brokerdesk/brokerdesk/test/apitest"
	"github.com/brokerdesk/brokerdesk/test/memwatch"
)

func TestMain(m *testing.M) { os.Exit(apitest.Main(m)) }

type transfer struct {
	Status  string  `json:"status"`
	Error   *string `json:"error"`
	Summary struct {
		Records            int64 `json:"records"`
		Contracts          int64 `json:"contracts"`
		ContractsToCreate  int64 `json:"contractsToCreate"`
		ContractsUnchanged int64 `json:"contractsUnchanged"`
	} `json:"summary"`
	Progress struct {
		Done, Created, Updated, Unchanged, Skipped int64
	} `json:"progress"`
}

// BenchmarkPortfolio imports a generated GDV file of PORTFOLIO_BENCH_CONTRACTS contracts
// (default 100,000; 4 packages, valid 9999) into a new company: validation (records/s,
// contracts/s, peak heap), commit (records/s, ms per 1,000 contracts, peak heap), then the
// same file again with autoCommit, which must report every contract unchanged. The file goes
// into blob storage and the transfer onto the queue directly: the upload endpoint takes at
// most 10 MB, the file is about 1.8 KB a contract.
func BenchmarkPortfolio(b *testing.B) {
	n := 100_000
	if s := os.Getenv("PORTFOLIO_BENCH_CONTRACTS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			b.Fatalf("PORTFOLIO_BENCH_CONTRACTS=%q", s)
		}
		n = v
	}
	env := apitest.New(b, app.WithClock(time.Now)) // a private server with its own workers
	ctx := context.Background()
	if err := env.Server.StartJobs(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = env.Server.StopJobs(context.Background()) })
	bucket, err := blobstore.Open(ctx, env.Config.BlobURL)
	if err != nil {
		b.Fatal(err)
	}
	defer bucket.Close()
	queue, err := jobs.NewClient(env.Server.JobsPool(), nil, nil, jobs.Config{}, zerolog.Nop())
	if err != nil {
		b.Fatal(err)
	}
	co := env.NewCompany(b)

	// start stores the generated file (the same bytes every time: fixed seed) and queues its
	// transfer, as POST /portfolio-transfers does.
	var stats gdv.GenerateStats
	start := func(autoCommit bool) uuid.UUID {
		key := blobstore.NewKey("portfolio", co.ID)
		w, err := bucket.NewWriter(ctx, key, nil)
		if err != nil {
			b.Fatal(err)
		}
		h := sha256.New()
		stats, err = gdv.Generate(io.MultiWriter(w, h), gdv.GenerateOptions{Contracts: n, Packages: 4, Seed: 1})
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			b.Fatal(err)
		}
		id := uuid.Must(uuid.NewV7())
		tx, err := tenancy.BeginPgx(tenancy.WithCompany(ctx, co.ID), env.Server.JobsPool())
		if err != nil {
			b.Fatal(err)
		}
		defer tx.Rollback(ctx) //nolint:errcheck // no-op after commit
		if _, err := tx.Exec(ctx, `INSERT INTO portfolio_transfers (id, company_id, created_at, updated_at, version, status, format,
				source, auto_commit, write_mode, encoding, filename, size, sha256, blob_key, committed, error)
			VALUES ($1, $2, now(), now(), 1, 'pending', 'gdv_vu_vermittler', 'bench', $3, 'overwrite', '', 'bench.gdv', $4, $5, $6, 0, '')`,
			id, co.ID, autoCommit, stats.Bytes, hex.EncodeToString(h.Sum(nil)), key); err != nil {
			b.Fatal(err)
		}
		if _, err := queue.InsertTx(ctx, tx, portfolio.Args{CompanyID: co.ID, TransferID: id}, nil); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			b.Fatal(err)
		}
		return id
	}
	// await polls the transfer until it has status want; while committing it prints the
	// time per 1,000 contracts of every 5,000 (the rate must not fall as the tables grow).
	await := func(id uuid.UUID, want string) transfer {
		var mark int64
		markAt := time.Now()
		for {
			var t transfer
			r := env.Do(b, apitest.Request{Path: "/portfolio-transfers/" + id.String(), Key: co.Secret})
			r.Decode(b, &t)
			if t.Status == "committing" && t.Progress.Done >= mark+5000 {
				now := time.Now()
				fmt.Printf("portfolio bench: committed %d..%d: %.2f s per 1,000\n", mark, t.Progress.Done,
					now.Sub(markAt).Seconds()*1000/float64(t.Progress.Done-mark))
				mark, markAt = t.Progress.Done, now
			}
			if t.Status == want {
				return t
			}
			if t.Status == "failed" {
				b.Fatalf("transfer failed: %s", r.Body)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	fmt.Printf("portfolio bench: %d contracts\n", n)

	b.ResetTimer()
	id := start(false)
	heap := memwatch.Start()
	t0 := time.Now()
	t := await(id, "validated")
	validate := time.Since(t0)
	validateHeap := heap.MB()
	if t.Summary.Contracts != int64(n) || t.Summary.ContractsToCreate != int64(n) {
		b.Fatalf("validated: %+v", t.Summary)
	}

	heap = memwatch.Start()
	t0 = time.Now()
	if r := env.Do(b, apitest.Request{Method: "POST", Path: "/portfolio-transfers/" + id.String() + "/commit", Key: co.Secret}); r.Status != 202 {
		b.Fatalf("commit: %d %s", r.Status, r.Body)
	}
	t = await(id, "committed")
	commit := time.Since(t0)
	commitHeap := heap.MB()
	if t.Progress.Created != int64(n) {
		b.Fatalf("committed: %+v", t.Progress)
	}

	heap = memwatch.Start()
	t0 = time.Now()
	again := await(start(true), "committed")
	reimport := time.Since(t0)
	reimportHeap := heap.MB()
	b.StopTimer()
	if again.Summary.ContractsUnchanged != int64(n) || again.Progress.Unchanged != int64(n) ||
		again.Progress.Created+again.Progress.Updated != 0 {
		b.Fatalf("re-import changed something: summary %+v, progress %+v", again.Summary, again.Progress)
	}

	recs := float64(stats.Records)
	b.ReportMetric(recs/validate.Seconds(), "validate-records/s")
	b.ReportMetric(float64(n)/validate.Seconds(), "validate-contracts/s")
	b.ReportMetric(validateHeap, "validate-peak-heap-MB")
	b.ReportMetric(recs/commit.Seconds(), "commit-records/s")
	b.ReportMetric(commit.Seconds()*1000/(float64(n)/1000), "commit-ms/1000contracts")
	b.ReportMetric(commitHeap, "commit-peak-heap-MB")
	b.ReportMetric(reimport.Seconds(), "reimport-s")
	b.ReportMetric(reimportHeap, "reimport-peak-heap-MB")
	fmt.Printf("portfolio bench: %d records, %.1f MB; validate %s, commit %s, re-import %s (unchanged %d)\n",
		stats.Records, float64(stats.Bytes)/(1<<20), validate.Round(time.Millisecond), commit.Round(time.Millisecond),
		reimport.Round(time.Millisecond), again.Progress.Unchanged)
}
