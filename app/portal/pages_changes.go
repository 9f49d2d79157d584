package portal

import (
	"context"
	"errors"
	"fmt"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/brokerdesk/brokerdesk/app/contacts"
	"github.com/brokerdesk/brokerdesk/app/platform/errs"
	"github.com/brokerdesk/brokerdesk/ent"
	"github.com/brokerdesk/brokerdesk/ent/portalchangerequest"
	"github.com/brokerdesk/brokerdesk/tenancy"
)

// The change pages: the customer's change requests with their status and the broker's reason,
// the forms that ask for a change (one per kind, prefilled with today's values) and the
// withdrawal of a pending one. The rules (validation, baseline, one pending request per kind,
// events) are CreateChange's and WithdrawChange's (changes.go); the pages only translate them.

// kindTitles name each kind on the pages.
var kindTitles = map[string]string{KindAddress: "Adresse", KindName: "Name", KindEmail: "E-Mail-Adresse",
	KindPhone: "Telefonnummer", KindBank: "Bankverbindung"}

// fieldLabels are the German labels of the fields of every kind.
var fieldLabels = map[string]string{"street": "Straße", "houseNumber": "Hausnummer", "zipCode": "PLZ", "city": "Ort",
	"country": "Land (z. B. DE)", "salutation": "Anrede", "firstName": "Vorname", "lastName": "Nachname",
	"email": "E-Mail-Adresse", "number": "Telefonnummer", "type": "Art", "iban": "IBAN", "bic": "BIC",
	"accountHolder": "Kontoinhaber"}

// fieldAutocomplete helps a phone's keyboard and the browser's autofill (WCAG 1.3.5).
var fieldAutocomplete = map[string]string{"street": "address-line1", "zipCode": "postal-code",
	"city": "address-level2", "country": "country", "salutation": "honorific-prefix", "firstName": "given-name",
	"lastName": "family-name", "email": "email", "number": "tel", "accountHolder": "name"}

// fieldInputType is the input's type where it is not text.
var fieldInputType = map[string]string{"email": "email", "number": "tel"}

// fieldOptions are the choices of the fields that are a select (the first: none).
var fieldOptions = map[string][]option{
	"salutation": {{"", "keine Angabe"}, {"Herr", "Herr"}, {"Frau", "Frau"}, {"divers", "divers"}, {"ohne Anrede", "ohne Anrede"}},
	"type": {{"", "automatisch"}, {contacts.PhoneMobile, "Mobil"}, {contacts.PhoneLandline, "Festnetz"},
		{contacts.PhoneFax, "Fax"}, {contacts.PhoneOther, "Sonstige"}},
}

// changeStatusLabels are the German names of the statuses.
var changeStatusLabels = map[portalchangerequest.Status]string{portalchangerequest.StatusPending: "in Prüfung",
	portalchangerequest.StatusApproved: "übernommen", portalchangerequest.StatusRejected: "abgelehnt",
	portalchangerequest.StatusWithdrawn: "zurückgezogen"}

// changeNotices are the status lines after a form: fixed texts chosen by the redirect's query,
// so nothing of the request is echoed.
var changeNotices = map[string]string{
	"created":   "Vielen Dank. Ihre Änderung wurde übermittelt; Ihr Makler prüft sie.",
	"withdrawn": "Ihre Änderung wurde zurückgezogen.",
	"decided":   "Diese Änderung wurde bereits bearbeitet und kann nicht mehr zurückgezogen werden.",
}

type option struct{ Value, Label string }

// formField is one input of a change form.
type formField struct {
	Name, Label, Type, Autocomplete, Value, Error string
	Required                                      bool
	Options                                       []option
	Hint                                          string
}

type changeFormData struct {
	Kind   string
	Fields []formField
}

type changeRow struct {
	ID, Kind, Created, Status, StatusClass, Reason string
	Values                                         []string // "Straße: Hauptstraße"
	Pending                                        bool
}

type changesData struct {
	Rows  []changeRow
	Kinds []option // the forms: kind, title
}

// changes handles GET /portal/{companyId}/changes: the customer's requests, newest first.
func (m *Module) changes(c *fiber.Ctx) error {
	return m.signedIn(c, func(ctx context.Context, s *Session) error {
		rows, err := tenancy.Client(ctx).PortalChangeRequest.Query().
			Where(portalchangerequest.ContactID(s.ContactID)).
			Order(ent.Desc(portalchangerequest.FieldCreatedAt), ent.Desc(portalchangerequest.FieldID)).All(ctx)
		if err != nil {
			return fmt.Errorf("portal: change requests of %s: %w", s.ContactID, err)
		}
		d := changesData{Rows: []changeRow{}}
		for _, k := range []string{KindAddress, KindName, KindEmail, KindPhone, KindBank} {
			d.Kinds = append(d.Kinds, option{k, kindTitles[k]})
		}
		for _, r := range rows {
			v, err := m.ChangeView(r, false) // a bank request's IBAN masked, for the customer too
			if err != nil {
				return err
			}
			row := changeRow{ID: r.ID.String(), Kind: kindTitles[v.Kind], Created: germanDate(&r.CreatedAt),
				Status: changeStatusLabels[r.Status], StatusClass: "status-" + v.Status, Reason: v.Reason,
				Pending: r.Status == portalchangerequest.StatusPending}
			for _, f := range KindFields(v.Kind) {
				if val := v.Changes[f]; val != "" {
					row.Values = append(row.Values, fieldLabels[f]+": "+val)
				}
			}
			d.Rows = append(d.Rows, row)
		}
		return m.render(c, fiber.StatusOK, "changes", PageData{Title: "Meine Änderungen", SignedIn: true, Nav: "changes",
			Notice: changeNotices[c.Query("done")], Data: d})
	})
}

// changeForm handles GET /portal/{companyId}/changes/new/{kind}: the form of a kind, prefilled
// with what the contact holds today (the IBAN excepted: it is typed anew, never shown in full).
// An unknown kind is the 404 page.
func (m *Module) changeForm(c *fiber.Ctx) error {
	kind := c.Params("kind")
	if KindFields(kind) == nil {
		return m.notFound(c)
	}
	return m.signedIn(c, func(ctx context.Context, s *Session) error {
		ct, err := m.d.Contacts.Find(ctx, s.ContactID)
		if err != nil {
			return fmt.Errorf("portal: contact %s of session %s: %w", s.ContactID, s.ID, err)
		}
		base, err := m.baselineOf(ct, kind)
		if err != nil {
			return err
		}
		d := PageData{}
		form := m.formOf(kind, base, &d)
		if kind == KindBank {
			form.Fields[0].Value = ""
			if iban := base["iban"]; iban != "" {
				form.Fields[0].Hint = "Derzeit gespeichert: " + MaskIBAN(iban)
			}
		}
		d.Title, d.SignedIn, d.Nav, d.Data = "Änderung: "+kindTitles[kind], true, "changes", form
		return m.render(c, fiber.StatusOK, "change_form", d)
	})
}

// formOf is the form of kind with vals, and the errors of d on its fields.
func (m *Module) formOf(kind string, vals map[string]string, d *PageData) changeFormData {
	f := changeFormData{Kind: kind}
	for _, name := range KindFields(kind) {
		typ := fieldInputType[name]
		if typ == "" {
			typ = "text"
		}
		ff := formField{Name: name, Label: fieldLabels[name], Type: typ, Autocomplete: fieldAutocomplete[name],
			Value: vals[name], Error: d.ErrorOf(name), Options: fieldOptions[name]}
		for _, r := range changeRequired[kind] {
			ff.Required = ff.Required || r == name
		}
		f.Fields = append(f.Fields, ff)
	}
	return f
}

// submitChange handles POST /portal/{companyId}/changes/new/{kind}: CreateChange with the
// form's fields of the kind. Invalid values re-render the form with an error summary (422), a
// pending request of the kind the form with a notice (409); success redirects (303) to the
// list with a notice.
func (m *Module) submitChange(c *fiber.Ctx) error {
	if !m.csrfOK(c) {
		return m.badForm(c)
	}
	kind := c.Params("kind")
	if KindFields(kind) == nil {
		return m.notFound(c)
	}
	vals := map[string]string{}
	for _, f := range KindFields(kind) {
		vals[f] = c.FormValue(f) // used within this request only (fasthttp reuses the memory after)
	}
	var done bool
	err := m.signedIn(c, func(ctx context.Context, s *Session) error {
		_, err := m.CreateChange(ctx, s, kind, vals)
		var inv *errs.Invalid
		switch {
		case err == nil:
			done = true
			return nil
		case errors.As(err, &inv):
			d := PageData{Title: "Änderung: " + kindTitles[kind], SignedIn: true, Nav: "changes"}
			fields := KindFields(kind)
			for _, fe := range inv.Errors {
				field := fe.Field
				if field == "changes" || field == "kind" {
					field = fields[0]
				}
				d.AddError(field, fieldMessage(field, fe))
			}
			d.Data = m.formOf(kind, vals, &d)
			return m.render(c, fiber.StatusUnprocessableEntity, "change_form", d)
		case errors.Is(err, errs.ErrConflict):
			d := PageData{Title: "Änderung: " + kindTitles[kind], SignedIn: true, Nav: "changes",
				Notice: "Sie haben bereits eine Änderung dieser Art übermittelt, die noch geprüft wird. " +
					"Ziehen Sie sie unter „Änderungen“ zurück, um eine neue zu senden."}
			d.Data = m.formOf(kind, vals, &d)
			return m.render(c, fiber.StatusConflict, "change_form", d)
		}
		return err
	})
	if err != nil || !done {
		return err
	}
	return m.redirect(c, "/changes?done=created")
}

// fieldMessage is the German message of a field error of CreateChange: by its code, and a
// general one for the rest (the English detail is the API's, not the customer's).
func fieldMessage(field string, fe errs.FieldError) string {
	label := fieldLabels[field]
	switch fe.Code {
	case "required":
		return "Bitte geben Sie „" + label + "“ an."
	case "unchanged":
		return "Die Angaben entsprechen den bereits gespeicherten Daten."
	case "too_long":
		return "„" + label + "“ ist zu lang."
	case "unknown_field":
		return "„" + label + "“ kann hier nicht geändert werden."
	}
	return "Bitte prüfen Sie „" + label + "“: die Angabe ist ungültig."
}

// withdrawChange handles POST /portal/{companyId}/changes/{changeRequestId}/withdraw: 303 to
// the list with a notice; a request decided meanwhile says so there. Another contact's request
// or a malformed id: the 404 page.
func (m *Module) withdrawChange(c *fiber.Ctx) error {
	if !m.csrfOK(c) {
		return m.badForm(c)
	}
	id, err := uuid.Parse(c.Params("changeRequestId"))
	if err != nil {
		return m.notFound(c)
	}
	var done string
	err = m.signedIn(c, func(ctx context.Context, s *Session) error {
		_, err := m.WithdrawChange(ctx, s, id)
		switch {
		case err == nil:
			done = "withdrawn"
			return nil
		case errors.Is(err, errs.ErrNotFound):
			return m.notFound(c)
		case errors.Is(err, errs.ErrConflict):
			done = "decided"
			return nil
		}
		return err
	})
	if err != nil || done == "" {
		return err
	}
	return m.redirect(c, "/changes?done="+done)
}
