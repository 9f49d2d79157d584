package gdv

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"testing"
)

// The benchmarks of the GDV reader (docs/benchmarks.md; the run: docs/perf-notes/2026-11-23-gdv-reader.md):
//
//	go test -run '^$' -bench . -benchtime 3x ./app/formats/gdv/

// heapSampler records the peak of the Go heap (bytes in live and not yet collected objects)
// while a reader runs: sampled every 1,024 events, a cheap runtime/metrics read.
type heapSampler struct {
	s    []metrics.Sample
	peak uint64
	n    int
}

func newHeapSampler() *heapSampler {
	runtime.GC()
	return &heapSampler{s: []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}}
}

func (h *heapSampler) tick() {
	h.n++
	if h.n%1024 != 0 {
		return
	}
	h.sample()
}

func (h *heapSampler) sample() {
	metrics.Read(h.s)
	if v := h.s[0].Value.Uint64(); v > h.peak {
		h.peak = v
	}
}

// drain reads every event of src.
func drain(tb testing.TB, src io.Reader, h *heapSampler) Summary {
	rd, err := NewReader(src, Options{})
	if err != nil {
		tb.Fatal(err)
	}
	for {
		_, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			tb.Fatal(err)
		}
		if h != nil {
			h.tick()
		}
	}
	if h != nil {
		h.sample()
	}
	return rd.Summary()
}

// benchFile writes the generated file of n contracts once per machine (temp directory).
func benchFile(tb testing.TB, n int) (string, int64) {
	path := filepath.Join(os.TempDir(), fmt.Sprintf("brokerdesk-gdv-bench-%d-v1.gdv", n))
	if fi, err := os.Stat(path); err == nil {
		return path, fi.Size()
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		tb.Fatal(err)
	}
	st, err := Generate(f, GenerateOptions{Contracts: n, Packages: 4, Seed: 1})
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		tb.Fatal(err)
	}
	return path, st.Bytes
}

// BenchmarkReader reads a generated file of 100,000 contracts (4 packages, valid Nachsätze)
// from disk: records and contracts per second, and the peak heap while reading.
func BenchmarkReader(b *testing.B) {
	path, size := benchFile(b, 100_000)
	b.SetBytes(size)
	var records, contracts int64
	var peak uint64
	cpu0 := cpuTime()
	b.ResetTimer()
	for range b.N {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		h := newHeapSampler()
		s := drain(b, bufio.NewReaderSize(f, 256<<10), h)
		f.Close()
		if s.Contracts != 100_000 || s.Warnings+s.Errors != 0 {
			b.Fatalf("summary %+v", s)
		}
		records += s.Records
		contracts += s.Contracts
		peak = max(peak, h.peak)
	}
	sec := b.Elapsed().Seconds()
	cpu := (cpuTime() - cpu0).Seconds()
	b.ReportMetric(float64(records)/sec, "records/s")
	b.ReportMetric(float64(contracts)/sec, "contracts/s")
	b.ReportMetric(float64(records)/cpu, "records/cpu-s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
}

// BenchmarkReader_500MB streams 500 MB of generated GDV data through the reader, produced on
// the fly (no file, no buffer of the input): the peak heap shows the reader's memory does not
// grow with the file. The time includes generating the data.
func BenchmarkReader_500MB(b *testing.B) {
	const target = 500 << 20
	contracts := target / 1840 // bytes per generated contract (1,842 measured)
	var peak uint64
	var bytes int64
	for range b.N {
		src, err := NewGenerated(GenerateOptions{Contracts: contracts, Packages: 8, Seed: 2})
		if err != nil {
			b.Fatal(err)
		}
		cr := &countingReader{r: src}
		h := newHeapSampler()
		s := drain(b, cr, h)
		if s.Contracts != int64(contracts) {
			b.Fatalf("contracts %d", s.Contracts)
		}
		peak = max(peak, h.peak)
		bytes = cr.n
	}
	if bytes < target*9/10 {
		b.Fatalf("only %d MB streamed", bytes>>20)
	}
	b.SetBytes(bytes)
	b.ReportMetric(float64(bytes)/(1<<20), "stream-MB")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	// The bound a parallel test held until issue 20: there the heap was the whole process's,
	// other tests' allocations included.
	if peak > 16<<20 {
		b.Errorf("peak heap %d MB streaming %d MB", peak>>20, bytes>>20)
	}
}

// BenchmarkGenerate writes 10,000 contracts: contracts per second of the generator.
func BenchmarkGenerate(b *testing.B) {
	for range b.N {
		if _, err := Generate(io.Discard, GenerateOptions{Contracts: 10_000, Seed: 3}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(10_000*b.N)/b.Elapsed().Seconds(), "contracts/s")
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
