package gdv

// Sparten returns the GDV Spartenverzeichnis (Anlage 1): every line-of-business code with its
// German and English label, sorted by code. The catalog the contracts API serves as contract
// types comes from here. The slice must not be modified.
func Sparten() []Code { return sparten }

// Sparte returns the catalog entry of a Sparte code ("030"); known is false for a code that
// is not in Anlage 1 (the code is kept, the labels are empty).
func Sparte(code string) (c Code, known bool) { return sparten.find(code) }

// sparten is read-only data: the GDV Spartenverzeichnis. 000 is the general Sparte that
// bundled contracts (Bündelungskennzeichen 1) use for their common records.
var sparten = codeList{
	{"000", "Allgemeine Sparte / gebündelter Vertrag", "General line / bundled contract"},
	{"010", "Lebensversicherung", "Life insurance"},
	{"011", "Einzel-Lebensversicherung mit Überschussbeteiligung", "Individual life insurance with profit participation"},
	{"012", "Kollektiv-Lebensversicherung mit Überschussbeteiligung", "Group life insurance with profit participation"},
	{"013", "Zusatzversicherung zur Lebensversicherung", "Supplementary life insurance"},
	{"014", "Sonstige Lebensversicherung", "Other life insurance"},
	{"015", "Verwaltung von Versorgungseinrichtungen", "Management of pension schemes"},
	{"020", "Krankenversicherung", "Health insurance"},
	{"021", "Einzel-Krankheitskostenvollversicherung", "Individual comprehensive health insurance"},
	{"022", "Einzel-Krankheitskostenversicherung (ambulant)", "Individual outpatient health insurance"},
	{"023", "Einzel-Krankheitskostenversicherung (stationär)", "Individual inpatient health insurance"},
	{"024", "Einzel-Krankentagegeldversicherung", "Individual daily sickness allowance insurance"},
	{"025", "Einzel-Krankenhaustagegeldversicherung", "Individual daily hospital allowance insurance"},
	{"026", "Sonstige Einzel-Teilversicherung (Kranken)", "Other individual partial health insurance"},
	{"027", "Gruppen-Krankenversicherung", "Group health insurance"},
	{"028", "Pflegekrankenversicherung", "Long-term care insurance"},
	{"029", "Übrige Krankenversicherung", "Other health insurance"},
	{"030", "Allgemeine Unfallversicherung", "Accident insurance"},
	{"031", "Einzel-Unfallversicherung ohne Beitragsrückgewähr", "Individual accident insurance without premium refund"},
	{"033", "Gruppen-Unfallversicherung ohne Beitragsrückgewähr", "Group accident insurance without premium refund"},
	{"034", "Probandenversicherung", "Clinical trial insurance"},
	{"038", "Unfallversicherung mit Beitragsrückgewähr", "Accident insurance with premium refund"},
	{"039", "Übrige Unfallversicherung", "Other accident insurance"},
	{"040", "Haftpflichtversicherung", "Liability insurance"},
	{"041", "Privathaftpflichtversicherung", "Personal liability insurance"},
	{"042", "Betriebs- und Berufshaftpflichtversicherung", "Business and professional liability insurance"},
	{"043", "Umwelt-Haftpflichtversicherung", "Environmental liability insurance"},
	{"044", "Vermögensschaden-Haftpflichtversicherung", "Financial loss liability insurance"},
	{"045", "Verkehrshaftungsversicherung", "Carrier's liability insurance"},
	{"046", "Strahlen- und Atomanlagen-Haftpflichtversicherung", "Radiation and nuclear liability insurance"},
	{"047", "Feuerhaftungsversicherung", "Fire liability insurance"},
	{"048", "See-, Binnensee- und Flussschifffahrts-Haftpflichtversicherung", "Marine and inland waterway liability insurance"},
	{"049", "Übrige Haftpflichtversicherung", "Other liability insurance"},
	{"050", "Kraftfahrtversicherung", "Motor insurance"},
	{"051", "Kraftfahrzeug-Haftpflichtversicherung", "Motor third-party liability insurance"},
	{"052", "Fahrzeugvollversicherung", "Comprehensive motor insurance"},
	{"053", "Fahrzeugteilversicherung", "Partial motor insurance"},
	{"054", "Kraftfahrtunfallversicherung", "Motor accident insurance"},
	{"055", "Kfz-Baustein", "Motor add-on cover"},
	{"059", "Kfz-Gepäckversicherung", "Motor luggage insurance"},
	{"060", "Luftfahrtversicherung", "Aviation insurance"},
	{"063", "Luftfahrzeug-Kaskoversicherung", "Aircraft hull insurance"},
	{"065", "Raumfahrzeug-Kaskoversicherung", "Spacecraft hull insurance"},
	{"069", "Übrige Luftfahrtversicherung", "Other aviation insurance"},
	{"070", "Rechtsschutzversicherung", "Legal expenses insurance"},
	{"071", "Rechtsschutzversicherung nach ARB", "Legal expenses insurance (ARB)"},
	{"072", "Vermögensschaden-Rechtsschutz für Organe (VRB)", "Legal expenses insurance for board members (VRB)"},
	{"073", "Rechtsschutz für Träger öffentlicher Aufgaben (ÖRB)", "Legal expenses insurance for public bodies (ÖRB)"},
	{"075", "Kraftfahrt-Strafrechtsschutz mit Auslands-Zivilrechtsschutz", "Motor criminal and foreign civil legal expenses insurance"},
	{"076", "Spezial-Strafrechtsschutz für Unternehmen", "Special criminal legal expenses insurance for companies"},
	{"079", "Übrige Rechtsschutzversicherung", "Other legal expenses insurance"},
	{"080", "Feuerversicherung", "Fire insurance"},
	{"081", "Feuer-Industrieversicherung", "Industrial fire insurance"},
	{"082", "Landwirtschaftliche Feuerversicherung", "Agricultural fire insurance"},
	{"083", "Sonstige Feuerversicherung", "Other fire insurance"},
	{"089", "Übrige Feuerversicherung", "Fire insurance, not itemised"},
	{"090", "Einbruchdiebstahl- und Raubversicherung", "Burglary and robbery insurance"},
	{"099", "Übrige Einbruchdiebstahlversicherung", "Other burglary insurance"},
	{"100", "Leitungswasserversicherung", "Water damage insurance"},
	{"109", "Übrige Leitungswasserversicherung", "Other water damage insurance"},
	{"110", "Glasversicherung", "Glass insurance"},
	{"120", "Sturmversicherung", "Storm insurance"},
	{"123", "Gärtnerei-Sturmversicherung", "Nursery storm insurance"},
	{"124", "Elementarschadenversicherung gewerblicher Risiken", "Natural hazards insurance for commercial risks"},
	{"130", "Verbundene Hausratversicherung", "Household contents insurance"},
	{"131", "Hausratversicherung ohne weitere Elementarschäden", "Household contents insurance without natural hazards"},
	{"132", "Hausratversicherung mit weiteren Elementarschäden", "Household contents insurance with natural hazards"},
	{"140", "Verbundene Wohngebäudeversicherung", "Residential building insurance"},
	{"141", "Wohngebäudeversicherung ohne weitere Elementarschäden", "Residential building insurance without natural hazards"},
	{"142", "Wohngebäudeversicherung mit weiteren Elementarschäden", "Residential building insurance with natural hazards"},
	{"150", "Hagelversicherung", "Hail insurance"},
	{"160", "Tierversicherung", "Livestock insurance"},
	{"161", "Langfristige Tierlebensversicherung", "Long-term livestock life insurance"},
	{"162", "Kurzfristige Tierversicherung", "Short-term livestock insurance"},
	{"169", "Übrige Tierversicherung", "Other livestock insurance"},
	{"170", "Technische Versicherung", "Engineering insurance"},
	{"171", "Maschinenversicherung", "Machinery insurance"},
	{"172", "Elektronikversicherung", "Electronic equipment insurance"},
	{"174", "Montageversicherung", "Erection insurance"},
	{"175", "Haushaltsgeräteversicherung", "Household appliance insurance"},
	{"176", "Bauleistungsversicherung", "Contractors' all risks insurance"},
	{"179", "Übrige technische Versicherung", "Other engineering insurance"},
	{"180", "Einheitsversicherung", "Block insurance"},
	{"181", "Allgemeine Einheitsversicherung", "General block insurance"},
	{"182", "Juwelierwaren-Einheitsversicherung", "Jewellers' block insurance"},
	{"183", "Rauchwaren-Einheitsversicherung", "Furriers' block insurance"},
	{"184", "Textilveredlungs-Einheitsversicherung", "Textile finishing block insurance"},
	{"185", "Wäscheschutz-Einheitsversicherung", "Laundry block insurance"},
	{"189", "Übrige Einheitsversicherung", "Other block insurance"},
	{"190", "Transportversicherung", "Transport insurance"},
	{"191", "Kaskoversicherung", "Hull insurance"},
	{"192", "Transportgüterversicherung", "Cargo insurance"},
	{"193", "Valorenversicherung (gewerblich)", "Valuables insurance (commercial)"},
	{"194", "Filmversicherung", "Film production insurance"},
	{"197", "Kriegsrisikoversicherung", "War risk insurance"},
	{"199", "Übrige Transportversicherung", "Other transport insurance"},
	{"200", "Kredit- und Kautionsversicherung", "Credit and surety insurance"},
	{"201", "Kautionsversicherung", "Surety insurance"},
	{"202", "Delkredereversicherung", "Trade credit insurance"},
	{"209", "Übrige Kredit- und Kautionsversicherung", "Other credit and surety insurance"},
	{"210", "Extended-Coverage-Versicherung (zusätzliche Gefahren zur Feuerversicherung)", "Extended coverage insurance"},
	{"230", "Betriebsunterbrechungsversicherung", "Business interruption insurance"},
	{"231", "Feuer-Betriebsunterbrechungsversicherung", "Fire business interruption insurance"},
	{"232", "Technische Betriebsunterbrechungsversicherung", "Engineering business interruption insurance"},
	{"233", "Sonstige Betriebsunterbrechungsversicherung", "Other business interruption insurance"},
	{"240", "Beistandsleistungsversicherung", "Assistance insurance"},
	{"241", "Schutzbriefversicherung", "Travel and breakdown assistance insurance"},
	{"242", "Sportboot-Serviceversicherung", "Leisure boat assistance insurance"},
	{"243", "Flugrückholkostenversicherung", "Air repatriation insurance"},
	{"244", "Schutzbriefversicherung mit Mallorca-Police", "Assistance insurance with rental car cover abroad"},
	{"249", "Übrige Beistandsleistungsversicherung", "Other assistance insurance"},
	{"250", "Luft- und Raumfahrzeug-Haftpflichtversicherung", "Aircraft and spacecraft liability insurance"},
	{"251", "Luftfahrt-Haftpflichtversicherung", "Aviation liability insurance"},
	{"252", "Raumfahrzeug-Haftpflichtversicherung", "Spacecraft liability insurance"},
	{"290", "Sonstige Schadenversicherung", "Other non-life insurance"},
	{"291", "Sonstige Sachschadenversicherung", "Other property insurance"},
	{"293", "Sonstige Vermögensschadenversicherung", "Other financial loss insurance"},
	{"294", "Sonstige gemischte Versicherung", "Other mixed insurance"},
	{"296", "Vertrauensschadenversicherung", "Fidelity insurance"},
	{"299", "Übrige sonstige Schadenversicherung", "Other non-life insurance, not itemised"},
	{"300", "Schaden- und Unfallversicherung insgesamt", "Non-life and accident insurance (total)"},
	{"510", "Verkehrsservice", "Traffic service"},
	{"550", "Investmentfonds", "Investment funds"},
	{"560", "Kapitalanlagen", "Capital investments"},
	{"570", "Baufinanzierungen", "Home financing"},
	{"580", "Bausparen", "Building savings"},
	{"600", "Moped", "Moped insurance"},
	{"630", "Rahmen- und Sammelverträge", "Framework and collective contracts"},
	{"650", "Handel und Handwerk", "Trade and crafts"},
	{"684", "Tierkrankenversicherung", "Pet health insurance"},
}

// lineLayoutSparte returns the Sparte whose layout a line-specific record (0210, 0211, 0220,
// 0221) of Sparte s uses, from the GDV's Anlage 1: Sparten without a layout of their own share
// the layout of their group (fire and property 080, engineering 170, transport 190, moped
// with motor 050/051) or the general layout 000. ok is false when the Sparte is unknown; the
// caller then tries the general layout and says so.
func lineLayoutSparte(satzart, s string) (layoutSparte string, ok bool) {
	switch s {
	case "080", "081", "082", "083", "089", "090", "099", "100", "109", "120", "123", "124", "150", "210", "230", "231":
		return "080", true
	case "170", "171", "172", "174", "175", "176", "179", "232":
		return "170", true
	case "180", "181", "182", "183", "184", "185", "189", "190", "191", "192", "193", "194", "197", "199":
		return "190", true
	case "600":
		if satzart == "0220" || satzart == "0221" {
			return "051", true
		}
		return "050", true
	}
	if _, known := Sparte(s); known {
		return s, true
	}
	return "000", false
}
