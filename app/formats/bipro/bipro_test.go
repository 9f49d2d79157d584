package bipro

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/brokerdesk/brokerdesk/app/formats/gdv"
)

func gdvFile(t *testing.T, contracts int, seed uint64) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := gdv.Generate(&b, gdv.GenerateOptions{Contracts: contracts, Seed: seed}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// wrap64 writes base64 in lines of 76 characters, as SOAP stacks do.
func wrap64(b []byte) string {
	s := base64.StdEncoding.EncodeToString(b)
	var out strings.Builder
	for len(s) > 76 {
		out.WriteString(s[:76] + "\r\n")
		s = s[76:]
	}
	out.WriteString(s)
	return out.String()
}

func document(name, mime, content string) string {
	return fmt.Sprintf(`<allg:Dokument><allg:Datei><allg:Dateiname>%s</allg:Dateiname><allg:MIMEType>%s</allg:MIMEType><allg:Daten>%s</allg:Daten></allg:Datei></allg:Dokument>`, name, mime, content)
}

func envelope(docs ...string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>
<!-- getShipment response > Lieferung > Transfer > Dokument -->
<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/">
 <soapenv:Body>
  <tran:getShipmentResponse xmlns:tran="http://www.bipro.net/namespace/transfer" xmlns:nac="http://www.bipro.net/namespace/nachrichten" xmlns:allg="http://www.bipro.net/namespace/allgemein">
   <tran:Response>
    <nac:BiPROVersion>2.6.1.1.0</nac:BiPROVersion>
    <nac:Status><nac:StatusID>OK</nac:StatusID></nac:Status>
    <tran:Lieferung>
     <tran:ID>L-4711</tran:ID>
     <tran:Einstellzeitpunkt>2024-01-02T10:00:00</tran:Einstellzeitpunkt>
     <tran:Kategorie>120000000</tran:Kategorie>
     <tran:Transfer>` + strings.Join(docs, "\n") + `</tran:Transfer>
    </tran:Lieferung>
   </tran:Response>
  </tran:getShipmentResponse>
 </soapenv:Body>
</soapenv:Envelope>`
}

func readShipment(t *testing.T, in []byte) (*gdv.File, *Shipment) {
	t.Helper()
	sh, err := Open(bytes.NewReader(in), Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { sh.Close() })
	f, err := gdv.Collect(sh.Reader(gdv.Options{}))
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return f, sh
}

func codes(f *gdv.File) []string {
	var out []string
	for _, i := range f.Issues {
		out = append(out, i.Code+":"+i.Source)
	}
	return out
}

func TestShipment_SOAP(t *testing.T) {
	t.Parallel()
	a, b := gdvFile(t, 3, 1), gdvFile(t, 2, 2)
	in := envelope(
		document("bestand_2024.gdv", "application/octet-stream", wrap64(a)),
		document("anschreiben.pdf", "application/pdf", base64.StdEncoding.EncodeToString([]byte("%PDF-1.7\n..."))),
		document("aenderungen.txt", "text/plain", "<![CDATA["+wrap64(b)+"]]>"),
	)
	f, sh := readShipment(t, []byte(in))
	if sh.ID != "L-4711" || sh.Category != "120000000" || sh.Created != "2024-01-02T10:00:00" || len(sh.Documents) != 3 {
		t.Fatalf("shipment %+v", sh)
	}
	var kinds []string
	for _, d := range sh.Documents {
		kinds = append(kinds, d.Name+"="+d.Kind)
	}
	if !slices.Equal(kinds, []string{"bestand_2024.gdv=gdv", "anschreiben.pdf=pdf", "aenderungen.txt=gdv"}) {
		t.Errorf("documents %v", kinds)
	}
	if len(f.Contracts) != 5 || len(f.Packages) != 2 || f.Packages[0].Source != "bestand_2024.gdv" || f.Packages[1].Number != 2 ||
		f.Packages[1].Source != "aenderungen.txt" || f.Contracts[3].Package != 2 || f.Packages[1].Check.Status != gdv.CheckConsistent {
		t.Fatalf("contracts %d packages %+v", len(f.Contracts), f.Packages)
	}
	if !slices.Equal(codes(f), []string{"document_not_read:anschreiben.pdf"}) || f.Issues[0].Severity != gdv.Warning {
		t.Errorf("issues %+v", f.Issues)
	}
	if f.Summary.Contracts != 5 || f.Summary.Packages != 2 || f.Summary.Warnings != 1 || f.Summary.Encoding != gdv.EncodingLatin9 {
		t.Errorf("summary %+v", f.Summary)
	}
	if f.Contracts[0].Persons[0].LastName == "" {
		t.Errorf("person %+v", f.Contracts[0].Persons[0])
	}
}

func TestShipment_MTOMAndZIP(t *testing.T) {
	t.Parallel()
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	for name, content := range map[string][]byte{"GDV/4711.gdv": gdvFile(t, 2, 3), "liesmich.txt": []byte("Hallo")} {
		w, _ := zw.Create(name)
		w.Write(content)
	}
	zw.Close()
	root := envelope(`<allg:Dokument><allg:Datei><allg:Dateiname>bestand.zip</allg:Dateiname><allg:Daten><xop:Include xmlns:xop="http://www.w3.org/2004/08/xop/include" href="cid:part1@bipro"/></allg:Daten></allg:Datei></allg:Dokument>`)
	var m bytes.Buffer
	fmt.Fprintf(&m, "--MIMEBoundary\r\nContent-Type: application/xop+xml; charset=UTF-8; type=\"text/xml\"\r\nContent-ID: <root@bipro>\r\n\r\n%s\r\n", root)
	fmt.Fprintf(&m, "--MIMEBoundary\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: binary\r\nContent-ID: <part1@bipro>\r\n\r\n")
	m.Write(zb.Bytes())
	m.WriteString("\r\n--MIMEBoundary--\r\n")
	f, sh := readShipment(t, m.Bytes())
	if len(sh.Documents) != 1 || sh.Documents[0].Kind != KindZIP || sh.Documents[0].Name != "bestand.zip" {
		t.Fatalf("documents %+v", sh.Documents)
	}
	if len(f.Contracts) != 2 || f.Packages[0].Source != "bestand.zip/GDV/4711.gdv" {
		t.Errorf("contracts %d packages %+v", len(f.Contracts), f.Packages)
	}
	if !slices.Equal(codes(f), []string{"document_not_read:bestand.zip/liesmich.txt"}) {
		t.Errorf("issues %v", codes(f))
	}
}

func TestShipment_Refused(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in, code string
	}{
		{"no XML", "0001 just a GDV file", "not_bipro"},
		{"XML without BiPRO namespace", `<?xml version="1.0"?><a><Daten>QUJD</Daten></a>`, "not_bipro"},
		{"contract data in the BiPRO data model", `<v:Vertrag xmlns:v="http://www.bipro.net/namespace/vertrag"><v:Versicherungsscheinnummer>4711</v:Versicherungsscheinnummer></v:Vertrag>`, "bipro_data_not_read"},
		{"a shipment without documents", envelope(), "no_documents"},
		{"DOCTYPE", `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]><x/>`, "not_bipro"},
		{"payload not base64", envelope(document("x.gdv", "", "§§§ not base64 §§§")), "not_bipro"},
		{"broken XML", envelope(document("x.gdv", "", "QUJD"))[:300], "not_bipro"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			_, err := Open(strings.NewReader(tc.in), Options{TempDir: dir})
			var fe *gdv.FormatError
			if !errors.As(err, &fe) || fe.Code != tc.code {
				t.Errorf("err = %v, want %s", err, tc.code)
			}
			if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
				t.Errorf("spool files left: %v", left)
			}
		})
	}
	// a BiPRO XML document inside a shipment is an error issue; the rest is read
	f, _ := readShipment(t, []byte(envelope(
		document("vertrag.xml", "text/xml", base64.StdEncoding.EncodeToString([]byte(`<?xml version="1.0"?><Vertrag/>`))),
		document("b.gdv", "", wrap64(gdvFile(t, 1, 4))))))
	if len(f.Contracts) != 1 || !slices.Equal(codes(f), []string{"bipro_data_not_read:vertrag.xml"}) || f.Issues[0].Severity != gdv.Error {
		t.Errorf("contracts %d issues %+v", len(f.Contracts), f.Issues)
	}
}

// FuzzOpen: any input is refused or read without panic, and leaves no spool file behind.
func FuzzOpen(f *testing.F) {
	f.Add([]byte(envelope(document("a.gdv", "", base64.StdEncoding.EncodeToString([]byte("0001x\n9999"))))))
	f.Add([]byte("--b\r\nContent-ID: <r>\r\n\r\n<x/>\r\n--b--\r\n"))
	f.Add([]byte(`<a xmlns="http://www.bipro.net/namespace/transfer"><Daten><![CDATA[QUJD]]></Daten></a>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		sh, err := Open(bytes.NewReader(data), Options{TempDir: dir, MaxBytes: 1 << 20})
		if err == nil {
			for _, err := range sh.Reader(gdv.Options{MaxRecordsPerContract: 20}).All() {
				if err != nil {
					break
				}
			}
			sh.Close()
		}
		if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
			t.Fatalf("spool files left: %v", left)
		}
	})
}
