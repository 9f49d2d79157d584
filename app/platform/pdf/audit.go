package pdf

import (
	"bytes"
	"fmt"
	"strconv"
	"time"
)

// berlin is the time zone of the audit page: the signers and the brokerage are in Germany.
// The time/tzdata import (in this package's signature.go) makes it load everywhere.
func berlin() *time.Location {
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		panic("pdf: Europe/Berlin: " + err.Error()) // embedded tzdata: cannot happen
	}
	return loc
}

// germanTime is a time as German documents write it, in Europe/Berlin, seconds included
// (the order of events matters on an audit page), "–" for no time.
func germanTime(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return "–"
	}
	t = t.In(loc)
	zone, _ := t.Zone()
	switch zone {
	case "CET":
		zone = "MEZ"
	case "CEST":
		zone = "MESZ"
	}
	return t.Format("02.01.2006, 15:04:05") + " Uhr " + zone
}

// Room for a signer's signature image on the audit page.
const auditSigW, auditSigH = 60.0, 20.0

// AppendAudit appends the audit pages (German, "Prüfprotokoll") to content: the request,
// the hash of the document the signers saw, the times, and per signer how the e-mail address
// was confirmed, when, from where and with which browser they signed, and their signature.
// Every value is printed literally.
func AppendAudit(content []byte, a Audit) ([]byte, error) {
	loc := berlin()
	f := newDoc()
	f.SetFont(family, "", bodySize)
	lay := &layout{}
	lay.newPage()
	lay.flow(f, "Prüfprotokoll", "B", h1Size, h1Lead, 0, bodyLead)
	lay.y += headingAfter
	row := func(label, value string) {
		lay.flow(f, printable(label+": "+cleanValue(value)), "", bodySize, bodyLead, 0, 0)
	}
	row("Dokument", a.Title)
	row("Signaturanfrage", a.RequestID)
	row("SHA-256 des unterzeichneten Dokuments", a.DocumentHash)
	row("Seitenzahl", strconv.Itoa(a.Pages))
	row("Anfrage erstellt", germanTime(a.CreatedAt, loc))
	row("Abgeschlossen", germanTime(a.CompletedAt, loc))
	lay.gap = true
	for i, s := range a.Signers {
		lay.block(2)
		lay.flow(f, printable(fmt.Sprintf("Unterzeichnende Person %d: %s", i+1, cleanValue(s.Name))), "B", h2Size, h2Lead, 0, 3*bodyLead)
		lay.y += headingAfter
		row("E-Mail", s.Email)
		row("Rolle", roleLabel(s.Role))
		row("E-Mail bestätigt per Einmalcode", germanTime(s.VerifiedAt, loc))
		row("Unterschrieben", germanTime(s.SignedAt, loc))
		row("IP-Adresse", s.IP)
		row("Browser", s.UserAgent)
		if len(s.Signature) > 0 {
			img, err := cleanPNG(s.Signature)
			if err != nil {
				return nil, fmt.Errorf("pdf: audit: signature of signer %d: %w", i+1, err)
			}
			scale := min(auditSigW/float64(img.w), auditSigH/float64(img.h))
			w, h := float64(img.w)*scale, float64(img.h)*scale
			lay.room(h + 2)
			lay.y++
			lay.add(op{png: img.data, x: marginX, y: lay.y, w: w, h: h})
			lay.y += h + 1
		}
		lay.gap = true
	}
	setMeta(f, Meta{Title: "Prüfprotokoll", CreatedAt: a.CompletedAt})
	write(f, lay.pages, func(page, pages int) string {
		return fmt.Sprintf("Prüfprotokoll · Seite %d von %d", page, pages)
	})
	var audit bytes.Buffer
	if err := f.Output(&audit); err != nil {
		return nil, fmt.Errorf("pdf: audit: %w", err)
	}
	return Merge([][]byte{content, audit.Bytes()})
}
