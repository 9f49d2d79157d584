package gdv

import (
	"fmt"
)

// fref is a field the reader decodes into the typed model. Positions are the GDV's; the test
// TestTypedFields_MatchLayouts checks every fref against the generated layout tables, so a
// hand-typed position can never drift from the GDV description.
type fref struct {
	satzart string
	td      int
	tech    string
	pos, n  int
	typ     FieldType
	nk      int
}

// The typed fields. Read-only.
var (
	// 0001 Vorsatz, part 1
	fVorsatzVU        = fref{"0001", 1, "VuNr", 5, 5, Alnum, 0}
	fVorsatzSender    = fref{"0001", 1, "Absender", 10, 30, Alnum, 0}
	fVorsatzAddressee = fref{"0001", 1, "Adressat", 40, 30, Alnum, 0}
	fVorsatzPeriod    = fref{"0001", 1, "ErstellungsDatumZeitraumVomZeitraumBis", 70, 16, Numeric, 0}
	fVorsatzAgency    = fref{"0001", 1, "GeschaeftsstelleVermittler", 86, 10, Alnum, 0}
	fVorsatzSenderK   = fref{"0001", 1, "ArtAbsenders", 237, 1, Alnum, 0}
	fVorsatzAddrK     = fref{"0001", 1, "ArtAdressaten", 238, 1, Alnum, 0}

	// 9999 Nachsatz
	fNachCount   = fref{"9999", 1, "AnzSaetze", 5, 10, Numeric, 0}
	fNachAgency  = fref{"9999", 1, "GeschaeftsstelleVermittler", 15, 10, Alnum, 0}
	fNachPremium = fref{"9999", 1, "Gesbeitrag", 25, 15, Amount, 2}
	fNachGross   = fref{"9999", 1, "GesbeitragBruttoInkasso", 40, 14, Amount, 2}
	fNachGrossS  = fref{"9999", 1, "Vorzeichen", 54, 1, Alnum, 0}
	fNachComm    = fref{"9999", 1, "GesprovisionsBetrag", 55, 14, Amount, 2}
	fNachCommS   = fref{"9999", 1, "Vorzeichen2", 69, 1, Alnum, 0}
	fNachBenef   = fref{"9999", 1, "Verssleistungen", 70, 14, Amount, 2}
	fNachBenefS  = fref{"9999", 1, "Vorzeichen3", 84, 1, Alnum, 0}
	fNachCosts   = fref{"9999", 1, "Schadenbearbeitungskost", 85, 14, Amount, 2}
	fNachCostsS  = fref{"9999", 1, "Vorzeichen4", 99, 1, Alnum, 0}

	// key of every data record (0100 part 1 stands for all)
	fKeyVU      = fref{"0100", 1, "VuNr", 5, 5, Alnum, 0}
	fKeyBundle  = fref{"0100", 1, "Buendelungskennzeichen", 10, 1, Alnum, 0}
	fKeySparte  = fref{"0100", 1, "Sparte", 11, 3, Numeric, 0}
	fKeyVSNR    = fref{"0100", 1, "VsNr", 14, 17, Alnum, 0}
	fKeyFolgeNr = fref{"0100", 1, "FolgeNr", 31, 2, Numeric, 0}
	fKeyAgency  = fref{"0100", 1, "GeschaeftsstelleVermittler", 33, 10, Alnum, 0}

	// 0100 Adressteil, part 1
	fSalutation = fref{"0100", 1, "Anredeschluessel", 43, 1, Alnum, 0}
	fName1      = fref{"0100", 1, "Name1", 44, 30, Alnum, 0}
	fName2      = fref{"0100", 1, "Name2", 74, 30, Alnum, 0}
	fName3      = fref{"0100", 1, "Name3", 104, 30, Alnum, 0}
	fTitle      = fref{"0100", 1, "Titel", 134, 20, Alnum, 0}
	fCountry    = fref{"0100", 1, "LKZ", 154, 3, Alnum, 0}
	fPostalCode = fref{"0100", 1, "PLZ", 157, 6, Alnum, 0}
	fCity       = fref{"0100", 1, "Ort", 163, 25, Alnum, 0}
	fStreet     = fref{"0100", 1, "Str", 188, 30, Alnum, 0}
	fPOBox      = fref{"0100", 1, "Postfach", 218, 8, Alnum, 0}
	fBirthDate  = fref{"0100", 1, "Geburtsdatum", 226, 8, DateField, 0}
	fNationalty = fref{"0100", 1, "Staatsangehoerigkeit", 234, 3, Alnum, 0}
	fRole       = fref{"0100", 1, "Adresskennzeichen", 237, 2, Alnum, 0}
	fGender     = fref{"0100", 1, "Geschlecht", 255, 1, Alnum, 0}
	// part 2
	fCustNo    = fref{"0100", 2, "PersonenKundenNrVersicherers", 43, 17, Alnum, 0}
	fBrokerNo  = fref{"0100", 2, "PersonenKundenNrVermittlers", 60, 17, Alnum, 0}
	fAccount1  = fref{"0100", 2, "KontoNr1", 107, 12, Alnum, 0}
	fBankCode1 = fref{"0100", 2, "Bankleitzahl1", 119, 8, Alnum, 0}
	fHolder1   = fref{"0100", 2, "AbweichenderKontoinhaber1", 127, 30, Alnum, 0}
	fPayMethod = fref{"0100", 2, "ZahlungsartWeg", 245, 1, Alnum, 0}
	fMarital   = fref{"0100", 2, "Familienstand", 246, 1, Alnum, 0}
	fCommShort = [4][2]fref{
		{{"0100", 2, "Kommunikationstyp1", 157, 2, Alnum, 0}, {"0100", 2, "KommunikationsNr1", 159, 20, Alnum, 0}},
		{{"0100", 2, "Kommunikationstyp2", 179, 2, Alnum, 0}, {"0100", 2, "KommunikationsNr2", 181, 20, Alnum, 0}},
		{{"0100", 2, "Kommunikationstyp3", 201, 2, Alnum, 0}, {"0100", 2, "KommunikationsNr3", 203, 20, Alnum, 0}},
		{{"0100", 2, "Kommunikationstyp4", 223, 2, Alnum, 0}, {"0100", 2, "KommunikationsNr4", 225, 20, Alnum, 0}},
	}
	// part 3
	fCommLong = [3][2]fref{
		{{"0100", 3, "Kommunikationstyp5", 43, 2, Alnum, 0}, {"0100", 3, "KommunikationsNr5", 45, 60, Alnum, 0}},
		{{"0100", 3, "Kommunikationstyp6", 105, 2, Alnum, 0}, {"0100", 3, "KommunikationsNr6", 107, 60, Alnum, 0}},
		{{"0100", 3, "Kommunikationstyp7", 167, 2, Alnum, 0}, {"0100", 3, "KommunikationsNr7", 169, 60, Alnum, 0}},
	}
	fLegalForm = fref{"0100", 3, "Rechtsform", 229, 2, Alnum, 0}
	// part 4
	fBirthName = fref{"0100", 4, "Geburtsname", 43, 30, Alnum, 0}
	fBankName1 = fref{"0100", 4, "NameKreditinstituts1", 73, 30, Alnum, 0}
	fAccount2  = fref{"0100", 4, "KontoNr2", 107, 12, Alnum, 0}
	fBankCode2 = fref{"0100", 4, "Bankleitzahl2", 119, 8, Alnum, 0}
	fHolder2   = fref{"0100", 4, "AbweichenderKontoinhaber2", 127, 30, Alnum, 0}
	fBankName2 = fref{"0100", 4, "NameKreditinstituts2", 157, 30, Alnum, 0}
	fBIC1      = fref{"0100", 4, "BIC1", 187, 11, Alnum, 0}
	fBIC2      = fref{"0100", 4, "BIC2", 198, 11, Alnum, 0}
	fIBAN1     = fref{"0100", 4, "IBAN1", 209, 34, Alnum, 0}
	// part 5
	fIBAN2      = fref{"0100", 5, "IBAN2", 43, 34, Alnum, 0}
	fBirthPlace = fref{"0100", 5, "Geburtsort", 77, 30, Alnum, 0}
	fTaxNumber  = fref{"0100", 5, "SteuerNrBeiJuristischenPersonen", 110, 17, Alnum, 0}
	fVATID      = fref{"0100", 5, "UmsatzsteuerIdentifikationsNr", 127, 17, Alnum, 0}

	// 0200 Allgemeiner Vertragsteil, part 1
	fCollection   = fref{"0200", 1, "Inkassoart", 43, 1, Alnum, 0}
	fStart        = fref{"0200", 1, "Vertragsbeginn", 44, 8, DateField, 0}
	fEnd          = fref{"0200", 1, "Vertragsablauf", 52, 8, DateField, 0}
	fMainRenewal  = fref{"0200", 1, "Hauptfaelligkeit", 60, 8, DateField, 0}
	fFrequency    = fref{"0200", 1, "Zahlungsweise", 68, 1, Alnum, 0}
	fStatus       = fref{"0200", 1, "Vertragsstatus", 69, 1, Alnum, 0}
	fReason       = fref{"0200", 1, "Abgangsgrund", 70, 2, Alnum, 0}
	fCancelDate   = fref{"0200", 1, "Abgangsdatum", 72, 8, DateField, 0}
	fCurrency     = fref{"0200", 1, "Waehrungsschluessel", 113, 3, Alnum, 0}
	fPremium      = fref{"0200", 1, "GesbeitragNettoInWE", 116, 12, Amount, 2}
	fContractCust = fref{"0200", 1, "PersonenKundenNrVersicherers", 159, 17, Alnum, 0}
	fContractBrk  = fref{"0200", 1, "PersonenKundenNrVermittlers", 176, 17, Alnum, 0}
	fAppDate      = fref{"0200", 1, "Antragsdatum", 201, 8, DateField, 0}
	// part 2
	fGross       = fref{"0200", 2, "GesbeitragBruttoInWE", 72, 12, Amount, 2}
	fPrintedVSNR = fref{"0200", 2, "DruckaufbereiteteVsNr", 84, 30, Alnum, 0}
	fProductName = fref{"0200", 2, "Produktname", 114, 20, Alnum, 0}
)

// typedFields lists every fref for the layout test.
func typedFields() []fref {
	out := []fref{
		fVorsatzVU, fVorsatzSender, fVorsatzAddressee, fVorsatzPeriod, fVorsatzAgency, fVorsatzSenderK, fVorsatzAddrK,
		fNachCount, fNachAgency, fNachPremium, fNachGross, fNachGrossS, fNachComm, fNachCommS, fNachBenef, fNachBenefS, fNachCosts, fNachCostsS,
		fKeyVU, fKeyBundle, fKeySparte, fKeyVSNR, fKeyFolgeNr, fKeyAgency,
		fSalutation, fName1, fName2, fName3, fTitle, fCountry, fPostalCode, fCity, fStreet, fPOBox, fBirthDate, fNationalty, fRole, fGender,
		fCustNo, fBrokerNo, fAccount1, fBankCode1, fHolder1, fPayMethod, fMarital, fLegalForm,
		fBirthName, fBankName1, fAccount2, fBankCode2, fHolder2, fBankName2, fBIC1, fBIC2, fIBAN1,
		fIBAN2, fBirthPlace, fTaxNumber, fVATID,
		fCollection, fStart, fEnd, fMainRenewal, fFrequency, fStatus, fReason, fCancelDate, fCurrency, fPremium, fContractCust, fContractBrk, fAppDate,
		fGross, fPrintedVSNR, fProductName,
	}
	for _, c := range fCommShort {
		out = append(out, c[0], c[1])
	}
	for _, c := range fCommLong {
		out = append(out, c[0], c[1])
	}
	return out
}

// charsetOf is the file's charset, or UTF-8 for a UTF-8 line in a single-byte file.
func (r *Reader) charsetOf(rec *record) *charset {
	if rec.utf8 && !r.cs.utf8 {
		return utf8Charset
	}
	return r.cs
}

// str decodes a text field; bytes that are no text become U+FFFD with a warning.
func (r *Reader) str(rec *record, f fref) string {
	b := rec.slice(f.pos, f.n)
	cs := r.charsetOf(rec)
	s, bad := cs.decode(b)
	if bad {
		r.issue(Warning, "invalid_character", rec, f.tech,
			fmt.Sprintf("%s holds bytes that are no text in %s; replaced by U+FFFD", f.tech, cs.name), s)
	}
	return s
}

// date decodes a date field; a value that is no date is left empty with a warning.
func (r *Reader) date(rec *record, f fref) Date {
	return r.dateAt(rec, f.pos, f.n, f.tech)
}

func (r *Reader) dateAt(rec *record, pos, n int, tech string) Date {
	b := rec.slice(pos, n)
	if len(b) < n && len(trimBlank(b)) == 0 {
		return Date{}
	}
	d, ok := parseDate(b)
	if !ok {
		r.issue(Warning, "invalid_date", rec, tech, tech+" is no date (TTMMJJJJ); left empty", r.raw(rec, b))
	}
	return d
}

// amount decodes a number with implied decimals; nil when blank, nil with a warning when it
// is no number.
func (r *Reader) amount(rec *record, f fref) *Decimal {
	b := rec.slice(f.pos, f.n)
	d, present, ok := decimalDigits(b, f.nk)
	if !ok {
		r.issue(Warning, "invalid_number", rec, f.tech, f.tech+" is no number; left empty", r.raw(rec, b))
		return nil
	}
	if !present {
		return nil
	}
	return &d
}

// signed applies a sign field ("-" negative; "+", blank positive) to an amount.
func (r *Reader) signed(rec *record, f, sign fref) *Decimal {
	d := r.amount(rec, f)
	if d != nil && rec.at(sign.pos) == '-' {
		v, _ := d.MulInt(-1)
		return &v
	}
	return d
}

// code decodes a coded field and looks it up; a code the list does not have is kept, with a
// warning.
func (r *Reader) code(rec *record, f fref, list codeList) Code {
	s := r.str(rec, f)
	c, known := lookup(list, s)
	if !known {
		r.issue(Warning, "unknown_code", rec, f.tech, fmt.Sprintf("%s %q is not a GDV code; kept as delivered", f.tech, s), s)
	}
	return c
}

func (r *Reader) raw(rec *record, b []byte) string {
	s, _ := r.charsetOf(rec).decode(b)
	return s
}

func trimBlank(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && (b[i] == ' ' || b[i] == 0) {
		i++
	}
	for j > i && (b[j-1] == ' ' || b[j-1] == 0) {
		j--
	}
	return b[i:j]
}
