package privacy

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// section is one JSON file of the export: the rows of a table that name the contact, each as
// row_to_json (every column, so a column added later is exported without a change here;
// internalColumn drops our machinery). $1 is the contact.
type section struct {
	file, key, what, query string
}

// sections are the tables that hold a contact's data besides the contact row and its sealed
// groups (kontakt.json): every table with a contact_id (ent/schema), and what hangs off them
// (task comments, the e-mails linked to the contact, signers of its signature requests).
// Events are those of the 30-day feed about the contact.
var sections = []section{
	{"telefonnummern.json", "phones", "Telefonnummern",
		`SELECT row_to_json(t) FROM contact_phones t WHERE contact_id = $1 ORDER BY created_at, id`},
	{"beziehungen.json", "relationships", "Beziehungen zu anderen Kontakten",
		`SELECT row_to_json(t) FROM contact_relationships t WHERE contact_id = $1 OR related_contact_id = $1 ORDER BY created_at, id`},
	{"notizen-und-aktivitaeten.json", "activities", "Notizen und Aktivitäten (Verlauf)",
		`SELECT row_to_json(t) FROM contact_activities t WHERE contact_id = $1 OR related_contact_id = $1 ORDER BY occurred_at, id`},
	{"finanzen.json", "finances", "Haushalt und Finanzen",
		`SELECT row_to_json(t) FROM contact_finances t WHERE contact_id = $1`},
	{"anfragen.json", "leads", "Anfragen (Leads)",
		`SELECT row_to_json(t) FROM leads t WHERE contact_id = $1 ORDER BY created_at, id`},
	{"anfragen-anhaenge.json", "leadAttachments", "Anhänge von Anfragen (Liste; Dateien im Ordner anfragen/)",
		`SELECT to_jsonb(t) - 'content' FROM lead_attachments t WHERE contact_id = $1 ORDER BY created_at, id`},
	{"vertraege.json", "contracts", "Versicherungsverträge",
		`SELECT row_to_json(t) FROM contracts t WHERE contact_id = $1 ORDER BY created_at, id`},
	{"provisionen.json", "commissionEntries", "Provisionsbuchungen zu Ihren Verträgen",
		`SELECT row_to_json(t) FROM commission_entries t WHERE contact_id = $1 ORDER BY booked_on, id`},
	{"aufgaben.json", "tasks", "Aufgaben",
		`SELECT row_to_json(t) FROM tasks t WHERE contact_id = $1 ORDER BY created_at, id`},
	{"aufgaben-kommentare.json", "taskComments", "Kommentare zu Aufgaben",
		`SELECT row_to_json(t) FROM task_comments t WHERE task_id IN (SELECT id FROM tasks WHERE contact_id = $1) ORDER BY created_at, id`},
	{"termine.json", "appointments", "Termine",
		`SELECT row_to_json(t) FROM appointments t WHERE contact_id = $1 ORDER BY created_at, id`},
	{"dokumente.json", "documents", "Dokumente (Liste; Dateien im Ordner dokumente/)",
		`SELECT row_to_json(t) FROM documents t WHERE contact_id = $1 ORDER BY created_at, id`},
	{"vertragsauslesungen.json", "extractions", "Aus Dokumenten ausgelesene Vertragsdaten",
		`SELECT row_to_json(t) FROM contract_extractions t WHERE contact_id = $1 ORDER BY created_at, id`},
	{"schriftverkehr.json", "correspondence", "Schriftverkehr (Vorgänge)",
		`SELECT row_to_json(t) FROM correspondence_cases t WHERE contact_id = $1 ORDER BY created_at, id`},
	{"e-mails.json", "emails", "E-Mails (Liste; Originalnachrichten im Ordner e-mails/)",
		`SELECT row_to_json(t) FROM emails t WHERE id IN (SELECT email_id FROM email_links WHERE contact_id = $1) ORDER BY created_at, id`},
	{"e-mail-anhaenge.json", "emailAttachmentList", "E-Mail-Anhänge (Liste; Dateien im Ordner e-mails/anhaenge/)",
		`SELECT row_to_json(t) FROM email_attachments t WHERE email_id IN (SELECT email_id FROM email_links WHERE contact_id = $1) ORDER BY created_at, id`},
	{"einwilligungen-und-widersprueche.json", "optOuts", "Widersprüche gegen Werbe-E-Mails an Ihre Adressen",
		`SELECT row_to_json(t) FROM email_opt_outs t WHERE lower(email) IN (
			SELECT lower(email) FROM contacts WHERE id = $1 AND email IS NOT NULL
			UNION SELECT lower(email) FROM portal_accesses WHERE contact_id = $1) ORDER BY created_at, id`},
	{"kundenportal.json", "portalAccess", "Zugang zum Kundenportal (ohne Passwort)",
		`SELECT row_to_json(t) FROM portal_accesses t WHERE contact_id = $1`},
	{"kundenportal-aenderungswuensche.json", "portalChangeRequests", "Änderungswünsche aus dem Kundenportal",
		`SELECT row_to_json(t) FROM portal_change_requests t WHERE contact_id = $1 ORDER BY created_at, id`},
	{"signaturanfragen.json", "signatureRequests", "Anfragen zur elektronischen Unterschrift",
		`SELECT row_to_json(t) FROM signature_requests t WHERE contact_id = $1
			OR id IN (SELECT request_id FROM signature_signers WHERE contact_id = $1) ORDER BY created_at, id`},
	{"unterzeichner.json", "signers", "Ihre Unterschriften und deren Protokoll",
		`SELECT row_to_json(t) FROM signature_signers t WHERE contact_id = $1 ORDER BY created_at, id`},
	{"beratungsdokumentation.json", "adviceRecords", "Beratungsprotokolle",
		`SELECT row_to_json(t) FROM advice_records t WHERE contact_id = $1 ORDER BY created_at, id`},
	{"importzeilen.json", "importRows", "Zeilen aus Dateiimporten, aus denen Ihr Kontakt entstand",
		`SELECT row_to_json(t) FROM contact_import_rows t WHERE contact_id = $1 ORDER BY import_id, row`},
	{"ereignisse.json", "events", "Ereignisse der letzten 30 Tage, die Ihre Daten enthalten",
		`SELECT row_to_json(t) FROM events t WHERE contact_id = $1 OR related_contact_id = $1 ORDER BY seq`},
	{"datenschutzanfragen.json", "privacyRequests", "Ihre Auskunfts- und Löschanfragen",
		`SELECT row_to_json(t) FROM privacy_requests t WHERE contact_id = $1 ORDER BY created_at, id`},
}

// readme writes README.txt: what the ZIP holds, in
// German, one line a file, in the order written.
func (z *zipOut) readme() error {
	var b strings.Builder
	b.WriteString("Auskunft nach Art. 15 DSGVO\r\n")
	b.WriteString("===========================\r\n\r\n")
	fmt.Fprintf(&b, "Erstellt am %s (UTC).\r\n\r\n", z.now.Format("02.01.2006 15:04"))
	b.WriteString("Dieses Archiv enthält alle personenbezogenen Daten, die Ihr Versicherungsmakler zu Ihnen\r\n")
	b.WriteString("gespeichert hat: die Daten als JSON-Dateien (maschinenlesbar, Art. 20 DSGVO) und die\r\n")
	b.WriteString("Originaldateien (Dokumente, E-Mails und ihre Anhänge). Interne Schlüssel und Passwörter sind\r\n")
	b.WriteString("nicht enthalten; Passwörter werden nur als nicht umkehrbarer Hashwert gespeichert.\r\n\r\n")
	b.WriteString("Inhalt\r\n------\r\n\r\n")
	files := map[string]int{}
	for _, e := range z.entries {
		if e.count < 0 {
			dir := e.name[:strings.LastIndex(e.name, "/")+1]
			files[dir]++
			continue
		}
		fmt.Fprintf(&b, "%-42s %s (%d %s)\r\n", e.name, e.what, e.count, plural(e.count))
	}
	dirs := make([]string, 0, len(files))
	for d := range files {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	if len(dirs) > 0 {
		b.WriteString("\r\nOrdner mit Originaldateien\r\n--------------------------\r\n\r\n")
	}
	for _, d := range dirs {
		fmt.Fprintf(&b, "%-42s %d %s\r\n", d, files[d], map[bool]string{true: "Datei", false: "Dateien"}[files[d] == 1])
	}
	b.WriteString("\r\nDie Dateien in den Ordnern beginnen mit der Kennung des Datensatzes, zu dem sie gehören.\r\n")
	w, err := z.create("README.txt")
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, b.String())
	return err
}

func plural(n int) string {
	if n == 1 {
		return "Eintrag"
	}
	return "Einträge"
}
