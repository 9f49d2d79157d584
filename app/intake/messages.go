package intake

import (
	"fmt"
	"strings"
)

// Messages follow Accept-Language: German (the default) or English. The English texts
// lead-intake.md shows ("First name is required", "Email is not valid", "Email or phone is
// required") are kept word for word; codes never change with the language.

// tr picks the text of lang.
func tr(lang, de, en string) string {
	if lang == "en" {
		return en
	}
	return de
}

// labels name the fields in a sentence: German, English.
var labels = map[string][2]string{
	"firstName":        {"Vorname", "First name"},
	"lastName":         {"Nachname", "Last name"},
	"email":            {"E-Mail", "Email"},
	"phone":            {"Telefon", "Phone"},
	"notes":            {"Notizen", "Notes"},
	"_redirect":        {"Weiterleitungsziel", "Redirect target"},
	"additionalFields": {"Zusatzfelder", "Additional fields"},
}

// label names a field in a sentence.
func label(field, lang string) string {
	if l, ok := labels[field]; ok {
		return tr(lang, l[0], l[1])
	}
	if name, ok := strings.CutPrefix(field, "additionalFields."); ok {
		return tr(lang, "Zusatzfeld „"+name+"“", `Additional field "`+name+`"`)
	}
	return field
}

// message is the text of one violation in lang.
func message(v violation, lang string) string {
	l := label(v.Field, lang)
	switch v.Code {
	case codeRequired:
		return tr(lang, l+" ist erforderlich", l+" is required")
	case codeTooLong:
		return tr(lang, fmt.Sprintf("%s: höchstens %d Zeichen erlaubt", l, v.Max),
			fmt.Sprintf("%s must be at most %d characters", l, v.Max))
	case codeInvalidEmail:
		return tr(lang, l+" ist ungültig", l+" is not valid")
	case codeEmailOrPhone:
		return tr(lang, "E-Mail oder Telefon ist erforderlich", "Email or phone is required")
	case codeInvalidType:
		if v.Field == "additionalFields" {
			return tr(lang, "Zusatzfelder müssen ein Objekt aus Namen und Werten sein",
				"Additional fields must be an object of names and values")
		}
		if strings.HasPrefix(v.Field, "additionalFields.") {
			return tr(lang, l+" muss Text, eine Zahl oder true/false sein",
				l+" must be text, a number or true/false")
		}
		return tr(lang, l+" muss Text sein", l+" must be text")
	case codeTooMany:
		return tr(lang, fmt.Sprintf("Höchstens %d Zusatzfelder sind erlaubt", v.Max),
			fmt.Sprintf("At most %d additional fields are allowed", v.Max))
	case codeInvalidName:
		return tr(lang, fmt.Sprintf("Namen von Zusatzfeldern müssen 1 bis %d Zeichen lang sein", v.Max),
			fmt.Sprintf("Names of additional fields must have 1 to %d characters", v.Max))
	case codeRedirectNotAllowed:
		return tr(lang, l+" muss eine http- oder https-Adresse auf einer erlaubten Domain des Schlüssels sein",
			l+" must be an http or https address on an allowed domain of the key")
	case codeFileTooLarge:
		return tr(lang, fmt.Sprintf("Die Datei ist größer als %d MB", v.Max>>20),
			fmt.Sprintf("The file is larger than %d MB", v.Max>>20))
	case codeTooManyFiles:
		return tr(lang, fmt.Sprintf("Höchstens %d Dateien sind erlaubt", v.Max),
			fmt.Sprintf("At most %d files are allowed", v.Max))
	}
	return tr(lang, l+" ist ungültig", l+" is not valid")
}

// Texts of request-level errors.
func msgMalformedJSON(lang string) string {
	return tr(lang, "Der Inhalt ist kein gültiges JSON-Objekt", "The body is not a valid JSON object")
}

func msgMalformedForm(lang string) string {
	return tr(lang, "Die Formulardaten konnten nicht gelesen werden", "The form data could not be read")
}

func msgInvalidEncoding(lang string) string {
	return tr(lang, "Der Inhalt ist kein gültiges UTF-8", "The body is not valid UTF-8")
}

func msgUnsupportedType(lang string) string {
	return tr(lang, "Senden Sie den Lead als application/json, application/x-www-form-urlencoded oder multipart/form-data",
		"Send the lead as application/json, application/x-www-form-urlencoded or multipart/form-data")
}

func msgUnsupportedCharset(lang, cs string) string {
	return tr(lang, fmt.Sprintf("Zeichensatz %q wird nicht unterstützt; verwenden Sie UTF-8", cs),
		fmt.Sprintf("Charset %q is not supported; use UTF-8", cs))
}

func msgNotLicensed(lang string) string {
	return tr(lang, "Die Lizenz der Firma enthält das Modul Leads nicht",
		"The company's license does not include the Leads module")
}

func msgOriginNotAllowed(lang string) string {
	return tr(lang, "Diese Herkunft (Origin) ist keine erlaubte Domain des Schlüssels",
		"The Origin is not an allowed domain of this key")
}

func msgAttachmentQuota(lang string) string {
	return tr(lang, "Das Tageskontingent für Dateianhänge dieses Maklerbüros ist ausgeschöpft",
		"This brokerage's daily attachment allowance is used up")
}
