// Package benchsign holds the benchmarks of the signing area (issue 22): rendering a 3-page
// broker contract from a template and sealing a 20-page PDF. They need no database; go tool
// task bench runs them with -count 5. Each reports the median of its operations (p50-ms),
// operations per second and the process's peak resident memory (peak-RSS-MB, VmHWM, reset
// before the benchmark where the kernel allows).
package benchsign

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"math/big"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brokerdesk/brokerdesk/app/platform/pdf"
	"github.com/brokerdesk/brokerdesk/app/platform/pdfseal"
)

var now = time.Now().Truncate(time.Second)

// contract is a broker contract (Maklervertrag) of sections paragraphs with the values of a
// generated document: 11 sections make 3 pages.
func contract(sections int) (string, map[string]string) {
	var b strings.Builder
	b.WriteString("# Maklervertrag\n\nzwischen\n{{contact.name}}\n{{contact.street}}\n{{contact.city}}\n- im Folgenden Kunde/Kundin -\n\n" +
		"und\n{{company.name}}\n{{company.street}}\n{{company.city}}\n- im Folgenden Makler/in -\n---\n")
	for i := 1; i <= sections; i++ {
		b.WriteString("## § " + strconv.Itoa(i) + " Gegenstand und Umfang der Betreuung\n")
		b.WriteString("Der Kunde/die Kundin beauftragt {{company.name}} mit der Vermittlung und Betreuung von Versicherungsverträgen. " +
			"Der Makler/die Maklerin prüft den bestehenden Versicherungsschutz, ermittelt den Bedarf und empfiehlt geeignete Tarife " +
			"nach objektiver, ausgewogener Marktuntersuchung gemäß § 60 VVG. Vergütet wird die Tätigkeit durch Courtagen der Versicherer.\n")
		b.WriteString("- Vertragsnummer {{contract.number}}, Beitrag {{contract.premium}} € jährlich\n- Ansprechpartner: {{user.name}}, {{user.email}}\n\n")
	}
	b.WriteString("\nOrt, Datum: {{company.city}}, {{today}}\n{{signature:contact}}\n{{signature:broker}}\n")
	return b.String(), map[string]string{
		"contact.name": "Jürgen Müller-Lüdenscheidt", "contact.street": "Königstraße 12", "contact.city": "70173 Stuttgart",
		"company.name": "Maßgeschneidert Versicherungsmakler GmbH", "company.street": "Äußere Weißenburger Str. 3",
		"company.city": "81667 München", "contract.number": "KV-2026-000123", "contract.premium": "1.234,56",
		"user.name": "Özlem Şahin", "user.email": "oezlem@example.org", "today": now.Format("02.01.2006"),
	}
}

var meta = pdf.Meta{Title: "Maklervertrag", Author: "Maßgeschneidert Versicherungsmakler GmbH", CreatedAt: now}

// measure runs op b.N times and reports the median duration, the rate and the peak RSS.
func measure(b *testing.B, op func()) {
	// "5" resets the peak RSS (VmHWM) to the current RSS (Linux 4.0+); without it the figure is
	// the process's peak so far
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	ds := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		t := time.Now()
		op()
		ds = append(ds, time.Since(t))
	}
	total := time.Since(start)
	b.StopTimer()
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(b.N)/total.Seconds(), "ops/s")
	b.ReportMetric(peakRSS(b), "peak-RSS-MB")
}

// peakRSS is VmHWM of /proc/self/status in MiB.
func peakRSS(b *testing.B) float64 {
	s, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range strings.Split(string(s), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "VmHWM:" {
			kb, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb / 1024
		}
	}
	b.Fatal("no VmHWM in /proc/self/status")
	return 0
}

// BenchmarkGenerate3PageContract: pdf.Render of the 3-page contract (what POST
// /documents/generate spends on the PDF; fonts are parsed and subset per render).
func BenchmarkGenerate3PageContract(b *testing.B) {
	body, vals := contract(11)
	r, err := pdf.Render(body, vals, meta)
	if err != nil {
		b.Fatal(err)
	}
	if r.Pages != 3 {
		b.Fatalf("the contract has %d pages, the benchmark wants 3", r.Pages)
	}
	measure(b, func() {
		if _, err := pdf.Render(body, vals, meta); err != nil {
			b.Fatal(err)
		}
	})
	b.ReportMetric(float64(len(r.PDF))/1024, "pdf-KiB") // after measure: ResetTimer drops metrics
}

// twentyPages is a signed request's PDF of 20 pages as the signing area seals it: a 19-page
// contract with the audit page appended (written by pdfcpu: object and xref streams).
func twentyPages(b *testing.B) []byte {
	sections := 11
	for ; sections < 200; sections++ {
		body, vals := contract(sections)
		r, err := pdf.Render(body, vals, meta)
		if err != nil {
			b.Fatal(err)
		}
		if r.Pages < 19 {
			continue
		}
		if r.Pages > 19 {
			b.Fatalf("no section count gives 19 pages (%d gives %d)", sections, r.Pages)
		}
		img, err := pdf.TypedSignature("Jürgen Müller-Lüdenscheidt")
		if err != nil {
			b.Fatal(err)
		}
		h := sha256.Sum256(r.PDF)
		out, err := pdf.AppendAudit(r.PDF, pdf.Audit{Title: "Maklervertrag", RequestID: "0b7c3f5e-2f6e-4a49-9a43-5d1c1f1e2a10",
			DocumentHash: hex.EncodeToString(h[:]), Pages: r.Pages, CreatedAt: now.Add(-time.Hour), CompletedAt: now,
			Signers: []pdf.AuditSigner{{Name: "Jürgen Müller-Lüdenscheidt", Email: "j.mueller@example.org", Role: "contact",
				VerifiedAt: now.Add(-time.Minute), SignedAt: now, IP: "203.0.113.7", UserAgent: "Mozilla/5.0", Signature: img}}})
		if err != nil {
			b.Fatal(err)
		}
		info, err := pdf.Inspect(out, pdf.Limits{})
		if err != nil || info.Pages != 20 {
			b.Fatalf("the sealed PDF has %d pages (%v), the benchmark wants 20", info.Pages, err)
		}
		return out
	}
	b.Fatal("no contract of 19 pages")
	return nil
}

// rsaSealer is a Sealer of an RSA 2048 key, the kind a purchased document signing
// certificate usually has.
func rsaSealer(b *testing.B) *pdfseal.Sealer {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		b.Fatal(err)
	}
	tpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Maßgeschneidert Versicherungsmakler GmbH"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(1, 0, 0), KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageContentCommitment}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &k.PublicKey, k)
	if err != nil {
		b.Fatal(err)
	}
	s, err := pdfseal.New(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkSeal20Pages: pdfseal's Seal of the 20-page PDF, with the ECDSA P-256 key of the
// development certificate and with an RSA 2048 key.
func BenchmarkSeal20Pages(b *testing.B) {
	in := twentyPages(b)
	key, cert, err := pdfseal.DevCertificate("BrokerDesk Benchmark")
	if err != nil {
		b.Fatal(err)
	}
	ec, err := pdfseal.New(key, cert)
	if err != nil {
		b.Fatal(err)
	}
	info := pdfseal.Info{Name: "Maßgeschneidert Versicherungsmakler GmbH", Reason: "Unterschrieben", Location: "München", Time: now}
	for _, s := range []struct {
		name string
		s    *pdfseal.Sealer
	}{{"ECDSA-P256", ec}, {"RSA-2048", rsaSealer(b)}} {
		b.Run(s.name, func(b *testing.B) {
			out, err := s.s.Seal(in, info)
			if err != nil {
				b.Fatal(err)
			}
			if !bytes.HasPrefix(out, in) {
				b.Fatal("the seal rewrote the document")
			}
			measure(b, func() {
				if _, err := s.s.Seal(in, info); err != nil {
					b.Fatal(err)
				}
			})
			b.ReportMetric(float64(len(in))/1024, "pdf-KiB")
		})
	}
}
