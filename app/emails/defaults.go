package emails

import "github.com/brokerdesk/brokerdesk/app/platform/ptr"

// DefaultTemplates are the German templates every company starts with (the operator's
// company create and `brokerdesk template seed`, which adds those a company lacks by name).
// Placeholders: contact.*, lead.firstName, user.name and company.name are filled by the send
// path from the linked contact or lead, the sending user and the company; the others
// (appointment.*, documents.list, claim.*) come from the placeholders of POST /emails. A
// placeholder without a value prints as nothing (Fill), so every text reads right without
// the optional ones.
func DefaultTemplates() []NewTemplate {
	const signature = "\n\nMit freundlichen Grüßen\n{{user.name}}\n{{company.name}}"
	return []NewTemplate{
		{
			Name:     "Terminbestätigung",
			Category: ptr.To("Termine"),
			Subject:  "Bestätigung unseres Termins am {{appointment.date}}",
			Text: "Guten Tag {{contact.firstName}} {{contact.lastName}},\n\n" +
				"hiermit bestätige ich unseren Termin am {{appointment.date}} um {{appointment.time}} Uhr " +
				"({{appointment.location}}).\n\n" +
				"Bitte bringen Sie, falls vorhanden, Ihre aktuellen Versicherungsunterlagen mit. Sollte Ihnen " +
				"der Termin nicht passen, antworten Sie einfach auf diese E-Mail." + signature,
		},
		{
			Name:     "Unterlagen angefordert",
			Category: ptr.To("Unterlagen"),
			Subject:  "Benötigte Unterlagen für Ihren Vorgang",
			Text: "Guten Tag {{contact.firstName}} {{contact.lastName}},\n\n" +
				"für die weitere Bearbeitung benötigen wir noch folgende Unterlagen von Ihnen:\n\n" +
				"{{documents.list}}\n\n" +
				"Sie können uns die Unterlagen gern als Antwort auf diese E-Mail senden (PDF oder Foto). " +
				"Vielen Dank für Ihre Unterstützung!" + signature,
		},
		{
			Name:     "Willkommen als Kunde",
			Category: ptr.To("Kundenbetreuung"),
			Subject:  "Willkommen bei {{company.name}}",
			Text: "Guten Tag {{contact.firstName}} {{contact.lastName}},\n\n" +
				"herzlich willkommen bei {{company.name}}! Wir freuen uns, Sie künftig in allen Fragen rund um " +
				"Ihre Versicherungen begleiten zu dürfen.\n\n" +
				"Ich bin Ihr persönlicher Ansprechpartner und jederzeit für Sie erreichbar. Im Schadenfall " +
				"melden Sie sich bitte direkt bei uns: Wir kümmern uns um die Abwicklung mit dem Versicherer." + signature,
		},
		{
			Name:      "Geburtstagsgruß",
			Category:  ptr.To("Marketing"),
			Marketing: true,
			Subject:   "Herzlichen Glückwunsch zum Geburtstag, {{contact.firstName}}!",
			Text: "Guten Tag {{contact.firstName}} {{contact.lastName}},\n\n" +
				"zu Ihrem Geburtstag gratulieren wir Ihnen herzlich und wünschen Ihnen Gesundheit, Glück und " +
				"ein erfolgreiches neues Lebensjahr!" + signature,
		},
		{
			Name:      "Jahresgespräch / Bestandsüberprüfung",
			Category:  ptr.To("Marketing"),
			Marketing: true,
			Subject:   "Ihr jährlicher Versicherungs-Check",
			Text: "Guten Tag {{contact.firstName}} {{contact.lastName}},\n\n" +
				"ein Jahr vergeht schnell, und oft ändert sich in dieser Zeit mehr, als man denkt: Umzug, " +
				"Familienzuwachs, ein neues Auto oder ein neuer Job. Gern prüfe ich gemeinsam mit Ihnen, ob Ihr " +
				"Versicherungsschutz noch zu Ihrer Lebenssituation passt und wo sich Beiträge sparen lassen.\n\n" +
				"Antworten Sie einfach auf diese E-Mail mit einem Terminwunsch, persönlich, telefonisch oder per " +
				"Video." + signature,
		},
		{
			Name:     "Schadenmeldung erhalten",
			Category: ptr.To("Schaden"),
			Subject:  "Ihre Schadenmeldung {{claim.number}} ist bei uns eingegangen",
			Text: "Guten Tag {{contact.firstName}} {{contact.lastName}},\n\n" +
				"vielen Dank für Ihre Schadenmeldung {{claim.number}}. Wir haben sie an Ihren Versicherer " +
				"weitergeleitet und halten Sie über den Fortgang auf dem Laufenden.\n\n" +
				"Bitte bewahren Sie beschädigte Gegenstände und Belege auf, bis der Schaden reguliert ist, und " +
				"senden Sie uns Fotos des Schadens, falls noch nicht geschehen." + signature,
		},
		{
			Name:     "Rückmeldung zu Ihrer Anfrage",
			Category: ptr.To("Anfragen"),
			Subject:  "Ihre Anfrage bei {{company.name}}",
			Text: "Guten Tag {{lead.firstName}} {{lead.lastName}},\n\n" +
				"vielen Dank für Ihre Anfrage. Gern erstelle ich Ihnen ein passendes Angebot. Wann darf ich Sie " +
				"für ein kurzes Gespräch anrufen?" + signature,
		},
	}
}
