package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/google/uuid"
)

// Contact imports (issue 25): a CSV or Excel file of contacts, analysed on a river job (mapping
// suggested, every row validated and checked for duplicates) before anything is written, then
// committed row by row on request. Both tables are company data under row-level security
// (migrations/…_imports_tenancy.sql); an import is visible as its creator's contacts are (the
// creator and who holds a delegation from them; company keys and admins see all).

// Enumerations of the area.
var (
	// ImportStatuses: queued (stored, analysis job inserted) → analyzing → analyzed → running
	// (the spec's state after commit) → completed; failed when the file cannot be read at all.
	ImportStatuses = []string{"queued", "analyzing", "analyzed", "running", "completed", "failed"}
	// ImportDuplicates is the spec's duplicates policy of the commit.
	ImportDuplicates = []string{"skip", "update", "create"}
	// ImportAnalyses: what the analysis found for a row.
	ImportAnalyses = []string{"valid", "duplicate", "invalid"}
	// ImportOutcomes are the spec's row outcomes, set by the commit.
	ImportOutcomes = []string{"created", "updated", "duplicate", "skipped", "failed"}
)

// ContactImport is one uploaded contact file (the spec's ImportJob).
type ContactImport struct{ ent.Schema }

// Mixin of ContactImport.
func (ContactImport) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, VisibleByOwner{Field: "creator_id"}, TimeMixin{}, VersionMixin{}}
}

// Fields of ContactImport.
func (ContactImport) Fields() []ent.Field {
	return []ent.Field{
		field.Enum("status").Values(ImportStatuses...).Default("queued"),
		field.Enum("format").Values("csv", "xlsx").Immutable(),
		field.Enum("contact_type").Values("private", "business").Immutable(),
		field.String("filename").NotEmpty().MaxRuneLen(255).Immutable(),
		field.Int64("size").NonNegative().Immutable(),
		field.String("sha256").MinLen(64).MaxLen(64).Immutable(),
		field.String("blob_key").NotEmpty().MaxLen(300).Immutable(),
		// encoding and delimiter: what the analysis detected (CSV only).
		field.String("encoding").Default("").MaxLen(20),
		field.String("delimiter").Default("").MaxLen(4),
		// headers: the file's header row as read.
		field.JSON("headers", []string{}).Optional(),
		// mapping: column header → contact field key, as given with the upload (nil: the
		// suggested one is used); suggested_mapping: what the analysis proposes.
		field.JSON("mapping", map[string]string{}).Optional().Immutable(),
		field.JSON("suggested_mapping", map[string]string{}).Optional(),
		field.JSON("tags", []string{}).Optional().Immutable(),
		// owner_id: the owner of every imported contact (nil: the creator, or none).
		field.UUID("owner_id", uuid.UUID{}).Optional().Nillable().Immutable(),
		field.UUID("creator_id", uuid.UUID{}).Optional().Nillable().Immutable(),
		// duplicates: the policy the commit was started with.
		field.Enum("duplicates").Values(ImportDuplicates...).Optional().Nillable(),
		field.Int("row_count").Default(0),
		// counts: rows by analysis (valid, duplicate, invalid) and, after the commit, by outcome.
		field.JSON("counts", map[string]int{}).Optional(),
		// committed: how many rows (in file order) the commit has finished; a resumed commit
		// starts after them.
		field.Int("committed").Default(0),
		field.String("error").Default("").MaxRuneLen(2000),
		field.Time("analyzed_at").Optional().Nillable(),
		field.Time("committed_at").Optional().Nillable(),
		field.Time("completed_at").Optional().Nillable(),
	}
}

// Indexes of ContactImport.
func (ContactImport) Indexes() []ent.Index {
	return []ent.Index{index.Fields("company_id", "created_at", "id"), index.Fields("company_id", "status")}
}

// ContactImportRow is one data row of an import: its cells, what the analysis found and what
// the commit did. Rows are visible as their import is (creator_id copied from it).
type ContactImportRow struct{ ent.Schema }

// Mixin of ContactImportRow.
func (ContactImportRow) Mixin() []ent.Mixin {
	return []ent.Mixin{IDMixin{}, TenantMixin{}, VisibleByOwner{Field: "creator_id"}}
}

// Fields of ContactImportRow.
func (ContactImportRow) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("import_id", uuid.UUID{}).Immutable(),
		field.UUID("creator_id", uuid.UUID{}).Optional().Nillable().Immutable(),
		// row: the 1-based row number in the file, the header row being row 1.
		field.Int("row").Positive().Immutable(),
		// cells: the row's values keyed by column header, as read (personal data: erased with
		// the contact it became or matched).
		field.JSON("cells", map[string]string{}).Sensitive(),
		field.Enum("analysis").Values(ImportAnalyses...),
		field.Enum("outcome").Values(ImportOutcomes...).Optional().Nillable(),
		// contact_id: the contact created or updated, or the existing one the row duplicates.
		field.UUID("contact_id", uuid.UUID{}).Optional().Nillable(),
		// duplicate_row: the earlier row of the same file this one duplicates.
		field.Int("duplicate_row").Optional().Nillable(),
		field.JSON("errors", []string{}).Optional(),
	}
}

// Indexes of ContactImportRow.
func (ContactImportRow) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("company_id", "import_id", "row").Unique(),
		index.Fields("company_id", "contact_id"),
	}
}
