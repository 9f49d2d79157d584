package bipro

import (
	"encoding/base64"
	"errors"
	"io"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
)

// BenchmarkShipment_BoundedMemory: a document of 22 MB inside the XML goes to a spool file as
// the XML streams; the heap stays small (at most 12 MB, reported as peak-heap-MB). The heap is
// the whole process's, so this runs as a benchmark, alone, not as a parallel test beside
// others' allocations (issue 20).
func BenchmarkShipment_BoundedMemory(b *testing.B) {
	var peak uint64
	for b.Loop() {
		peak = max(peak, readLargeShipment(b))
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	if peak > 12<<20 {
		b.Errorf("peak heap %d MB for a 22 MB document", peak>>20)
	}
}

// readLargeShipment reads a shipment of one 22 MB document and returns the peak heap.
func readLargeShipment(b *testing.B) uint64 {
	gen, err := gdv.NewGenerated(gdv.GenerateOptions{Contracts: 13_000, Seed: 5})
	if err != nil {
		b.Fatal(err)
	}
	pr, pw := io.Pipe()
	go func() {
		head, tail, _ := strings.Cut(envelope(document("gross.gdv", "", "@@")), "@@")
		io.WriteString(pw, head)
		enc := base64.NewEncoder(base64.StdEncoding, pw)
		io.Copy(enc, gen)
		enc.Close()
		io.WriteString(pw, tail)
		pw.Close()
	}()
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	sh, err := Open(pr, Options{TempDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer sh.Close()
	metrics.Read(sample)
	if sh.Documents[0].Size < 20<<20 {
		b.Fatalf("document of %d bytes", sh.Documents[0].Size)
	}
	rd := sh.Reader(gdv.Options{})
	peak := sample[0].Value.Uint64()
	n := 0
	for {
		_, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		if n++; n%1000 == 0 {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
		}
	}
	if s := rd.Summary(); s.Contracts != 13_000 || s.Warnings+s.Errors != 0 {
		b.Fatalf("summary %+v", s)
	}
	return peak
}
