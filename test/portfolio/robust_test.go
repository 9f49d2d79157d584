package portfolio

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
)

// shipment is a BiPRO getShipment response with one document (its content base64 in the XML).
func shipment(name string, content []byte) []byte {
	return []byte(`<?xml version="1.0" encoding="UTF-8"?>
<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>
<tran:getShipmentResponse xmlns:tran="http://www.bipro.net/namespace/transfer" xmlns:allg="http://www.bipro.net/namespace/allgemein">
<tran:Response><tran:Lieferung><tran:ID>L-1</tran:ID><tran:Transfer><allg:Dokument><allg:Datei>
<allg:Dateiname>` + name + `</allg:Dateiname><allg:Daten>` + base64.StdEncoding.EncodeToString(content) + `</allg:Daten>
</allg:Datei></allg:Dokument></tran:Transfer></tran:Lieferung></tran:Response></tran:getShipmentResponse>
</soapenv:Body></soapenv:Envelope>`)
}

// zipped is a ZIP archive of one entry: content, then spaces more spaces (written in pieces).
func zipped(t *testing.T, name string, content []byte, spaces int) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, err := zw.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = w.Write(content)
	chunk := bytes.Repeat([]byte(" "), 64<<10)
	for ; spaces > 0; spaces -= len(chunk) {
		_, _ = w.Write(chunk[:min(spaces, len(chunk))])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestPortfolio_BiPROReadOrFailed: every BiPRO shipment ends validated or failed with a
// message, never pending (issue 20, item 7). Each case failed before: the shipment ending in a
// newline was refused with a bare EOF, retried 25 times and stayed pending; the ZIP bomb (a GDV
// head and 180 MB of spaces, 175 KB deflated) was unpacked; the ZIP entry whose deflate data
// is broken failed with a non-format error and was retried like a storage failure.
func TestPortfolio_BiPROReadOrFailed(t *testing.T) {
	env := setup(t)
	var gen bytes.Buffer
	if _, err := gdv.Generate(&gen, gdv.GenerateOptions{Contracts: 30, Seed: 11}); err != nil {
		t.Fatal(err)
	}
	broken := zipped(t, "bestand.gdv", gen.Bytes(), 0)
	// The entry's deflate data starts after its 30-byte local header and name; flip bytes in
	// the middle of it (the first 8 bytes, which sniff the kind, stay readable).
	at := 30 + len("bestand.gdv") + len(broken)/3
	for i := at; i < at+64; i++ {
		broken[i] ^= 0x5a
	}
	for _, tc := range []struct {
		name, status, errPrefix string
		file                    []byte
	}{
		{"ends in a newline", "validated", "", append(shipment("bestand.gdv", gen.Bytes()), '\n')},
		{"ends in white space and a comment", "validated", "", append(shipment("bestand.gdv", gen.Bytes()), "\r\n <!-- Ende -->\r\n"...)},
		{"ZIP bomb", "failed", "zip_ratio: ", shipment("bestand.zip", zipped(t, "GDV/bombe.gdv", []byte("0001"), 180<<20))},
		{"broken deflate data", "failed", "unreadable: ", shipment("bestand.zip", broken)},
		{"cut short", "failed", "not_bipro: ", shipment("bestand.gdv", gen.Bytes())[:1000]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			co := env.NewCompany(t)
			r := upload(t, env, co.Secret, map[string]string{"format": "bipro_430_4"}, "lieferung.xml", tc.file)
			if r.Status != 202 {
				t.Fatalf("upload: %d %s", r.Status, r.Body)
			}
			var tr transfer
			r.Decode(t, &tr)
			tr = await(t, env, co.Secret, tr.ID, "validated", "failed")
			errText := ""
			if tr.Error != nil {
				errText = *tr.Error
			}
			switch {
			case tr.Status != tc.status:
				t.Errorf("status %s (%s), want %s", tr.Status, errText, tc.status)
			case tc.status == "validated" && tr.Summary.Contracts != 30:
				t.Errorf("%d contracts, want 30", tr.Summary.Contracts)
			case tc.status == "failed" && (!strings.HasPrefix(errText, tc.errPrefix) || len(errText) < len(tc.errPrefix)+10):
				t.Errorf("error %q, want %q and a message", errText, tc.errPrefix)
			}
			// The job ran once: no retry of a file that cannot be read.
			var attempts int
			var state string
			if err := env.OwnerDB.QueryRow(`SELECT attempt, state FROM river.river_job WHERE args->>'transferId' = $1`, tr.ID).
				Scan(&attempts, &state); err != nil {
				t.Fatal(err)
			}
			if attempts != 1 {
				t.Errorf("job %s after %d attempts, want 1", state, attempts)
			}
		})
	}
}
