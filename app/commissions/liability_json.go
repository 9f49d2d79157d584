package commissions

import (
	"encoding/hex"
	"encoding/json"

	"github.com/google/uuid"
)

// AppendJSON appends the report as encoding/json would encode it (the same bytes: the fields'
// order and names of the struct tags, strings escaped alike, HTML characters included), without
// reflection and without Money's MarshalJSON per row. The admin's body at 2,000,000 entries is
// 250,915 rows, 58 MB: encoding/json took 0.8-1.4 s of it on the seeded database, this ~0.1 s
// (TestLiabilityReportAppendJSON holds the bytes equal).
func (r LiabilityReport) AppendJSON(b []byte) []byte {
	b = append(b, `{"data":[`...)
	for i, row := range r.Data {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"contractId":"`...)
		b = appendUUID(b, row.ContractID)
		b = append(b, `","contactId":"`...)
		b = appendUUID(b, row.ContactID)
		b = append(b, `","insurerName":`...)
		b = appendJSONString(b, row.InsurerName)
		b = append(b, `,"policyNumber":`...)
		if row.PolicyNumber == nil {
			b = append(b, "null"...)
		} else {
			b = appendJSONString(b, *row.PolicyNumber)
		}
		b = append(b, `,"openLiability":`...)
		b = appendJSONString(b, row.OpenLiability.String())
		b = append(b, `,"liabilityEndsOn":`...)
		b = appendJSONString(b, row.LiabilityEndsOn)
		b = append(b, '}')
	}
	b = append(b, `],"total":`...)
	return append(appendJSONString(b, r.Total.String()), '}')
}

// appendJSONString appends s quoted: as is when every byte is printable ASCII that
// encoding/json leaves alone (ids, amounts, dates, most names), else as encoding/json quotes it.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendUUID appends u in its canonical form (uuid.UUID.String, without the string).
func appendUUID(b []byte, u uuid.UUID) []byte {
	var s [36]byte
	hex.Encode(s[0:8], u[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], u[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], u[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], u[8:10])
	s[23] = '-'
	hex.Encode(s[24:], u[10:])
	return append(b, s[:]...)
}
