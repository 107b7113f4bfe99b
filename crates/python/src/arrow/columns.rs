//! One Arrow builder a column, and how each takes its value from a record.

use std::sync::Arc;

use arrow_array::builder::{
    Float32Builder, Int16Builder, Int32Builder, Int64Builder, Int8Builder, ListBuilder,
    StringBuilder, UInt16Builder, UInt32Builder, UInt8Builder,
};
use arrow_array::types::Int32Type;
use arrow_array::{ArrayRef, DictionaryArray};
use arrow_schema::{DataType, Field as ArrowField};
use bam::RecordRef;

use super::text::Text;
use super::Field;
use crate::tag::{Elements, Value};
use crate::Error;

/// What a tag column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TagKind {
    /// The value as SAM text, whatever its type (a tag asked for without one).
    Text,
    /// `A`, `Z` or `H`: text.
    Str(u8),
    /// An integer type (`c C s S i I`): the column's type; any stored integer that fits is
    /// taken (BAM stores each integer in the smallest type that holds it).
    Int(u8),
    /// `f`.
    Float,
    /// `B` with an integer subtype: lists of 64-bit integers.
    IntArray,
    /// `Bf`: lists of floats.
    FloatArray,
}

impl TagKind {
    /// The kind of a tag column asked for as `tag` with type code `ty` (oxbow's `tag_defs`).
    pub fn parse(tag: &str, ty: Option<&str>) -> Result<TagKind, Error> {
        if tag.len() != 2 || !tag.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(Error::Argument(format!(
                "a tag is two letters or digits, not '{tag}'"
            )));
        }
        Ok(match ty {
            None => TagKind::Text,
            Some(t @ ("A" | "Z" | "H")) => TagKind::Str(t.as_bytes()[0]),
            Some(t @ ("c" | "C" | "s" | "S" | "i" | "I")) => TagKind::Int(t.as_bytes()[0]),
            Some("f") => TagKind::Float,
            Some("Bc" | "BC" | "Bs" | "BS" | "Bi" | "BI") => TagKind::IntArray,
            Some("Bf") => TagKind::FloatArray,
            Some(other) => {
                return Err(Error::Argument(format!(
                    "tag {tag}: unknown type '{other}' (A Z H c C s S i I f, or B with one of \
                     c C s S i I f)"
                )))
            }
        })
    }

    /// The Arrow type of the column.
    pub fn data_type(self) -> DataType {
        match self {
            TagKind::Text | TagKind::Str(_) => DataType::Utf8,
            TagKind::Int(t) => match t {
                b'c' => DataType::Int8,
                b'C' => DataType::UInt8,
                b's' => DataType::Int16,
                b'S' => DataType::UInt16,
                b'i' => DataType::Int32,
                _ => DataType::UInt32,
            },
            TagKind::Float => DataType::Float32,
            TagKind::IntArray => {
                DataType::List(Arc::new(ArrowField::new("item", DataType::Int64, true)))
            }
            TagKind::FloatArray => {
                DataType::List(Arc::new(ArrowField::new("item", DataType::Float32, true)))
            }
        }
    }
}

/// Integer builders of each tag type.
enum Ints {
    I8(Int8Builder),
    U8(UInt8Builder),
    I16(Int16Builder),
    U16(UInt16Builder),
    I32(Int32Builder),
    U32(UInt32Builder),
}

impl Ints {
    fn new(ty: u8) -> Ints {
        match ty {
            b'c' => Ints::I8(Int8Builder::new()),
            b'C' => Ints::U8(UInt8Builder::new()),
            b's' => Ints::I16(Int16Builder::new()),
            b'S' => Ints::U16(UInt16Builder::new()),
            b'i' => Ints::I32(Int32Builder::new()),
            _ => Ints::U32(UInt32Builder::new()),
        }
    }

    /// Appends `v`, or null when absent or out of the column type's range.
    fn push(&mut self, v: Option<i64>) {
        match self {
            Ints::I8(b) => b.append_option(v.and_then(|v| v.try_into().ok())),
            Ints::U8(b) => b.append_option(v.and_then(|v| v.try_into().ok())),
            Ints::I16(b) => b.append_option(v.and_then(|v| v.try_into().ok())),
            Ints::U16(b) => b.append_option(v.and_then(|v| v.try_into().ok())),
            Ints::I32(b) => b.append_option(v.and_then(|v| v.try_into().ok())),
            Ints::U32(b) => b.append_option(v.and_then(|v| v.try_into().ok())),
        }
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Ints::I8(b) => Arc::new(b.finish()),
            Ints::U8(b) => Arc::new(b.finish()),
            Ints::I16(b) => Arc::new(b.finish()),
            Ints::U16(b) => Arc::new(b.finish()),
            Ints::I32(b) => Arc::new(b.finish()),
            Ints::U32(b) => Arc::new(b.finish()),
        }
    }
}

/// A tag column's builder.
enum TagBuilder {
    Str(StringBuilder),
    Int(Ints),
    Float(Float32Builder),
    IntArray(ListBuilder<Int64Builder>),
    FloatArray(ListBuilder<Float32Builder>),
}

/// One tag's column.
pub(crate) struct TagColumn {
    tag: [u8; 2],
    kind: TagKind,
    builder: TagBuilder,
}

impl TagColumn {
    /// `tag` has been checked to be two ASCII characters ([`TagKind::parse`]).
    pub(crate) fn new(tag: &str, kind: TagKind) -> TagColumn {
        let b = tag.as_bytes();
        let builder = match kind {
            TagKind::Text | TagKind::Str(_) => TagBuilder::Str(StringBuilder::new()),
            TagKind::Int(t) => TagBuilder::Int(Ints::new(t)),
            TagKind::Float => TagBuilder::Float(Float32Builder::new()),
            TagKind::IntArray => TagBuilder::IntArray(ListBuilder::new(Int64Builder::new())),
            TagKind::FloatArray => TagBuilder::FloatArray(ListBuilder::new(Float32Builder::new())),
        };
        TagColumn {
            tag: [b[0], b[1]],
            kind,
            builder,
        }
    }

    fn push(&mut self, value: Option<Value<'_>>, scratch: &mut Vec<u8>) {
        match (&mut self.builder, self.kind, value) {
            (TagBuilder::Str(b), TagKind::Text, Some(v)) => {
                scratch.clear();
                v.write_text(scratch);
                b.append_value(String::from_utf8_lossy(scratch));
            }
            (TagBuilder::Str(b), TagKind::Str(b'A'), Some(Value::Char(c))) => {
                b.append_value(char::from(c).to_string());
            }
            (TagBuilder::Str(b), TagKind::Str(b'Z'), Some(Value::Text(t)))
            | (TagBuilder::Str(b), TagKind::Str(b'H'), Some(Value::Hex(t))) => {
                b.append_value(String::from_utf8_lossy(t));
            }
            (TagBuilder::Str(b), _, _) => b.append_null(),
            (TagBuilder::Int(b), _, Some(Value::Int(i, _))) => b.push(Some(i)),
            (TagBuilder::Int(b), _, _) => b.push(None),
            (TagBuilder::Float(b), _, Some(Value::Float(f))) => b.append_value(f),
            (TagBuilder::Float(b), _, _) => b.append_null(),
            (TagBuilder::IntArray(b), _, Some(Value::Array(_, Elements::Ints(v)))) => {
                b.values().append_slice(&v);
                b.append(true);
            }
            (TagBuilder::IntArray(b), _, _) => b.append(false),
            (TagBuilder::FloatArray(b), _, Some(Value::Array(_, Elements::Floats(v)))) => {
                b.values().append_slice(&v);
                b.append(true);
            }
            (TagBuilder::FloatArray(b), _, _) => b.append(false),
        }
    }

    fn finish(&mut self) -> ArrayRef {
        match &mut self.builder {
            TagBuilder::Str(b) => Arc::new(b.finish()),
            TagBuilder::Int(b) => b.finish(),
            TagBuilder::Float(b) => Arc::new(b.finish()),
            TagBuilder::IntArray(b) => Arc::new(b.finish()),
            TagBuilder::FloatArray(b) => Arc::new(b.finish()),
        }
    }
}

/// A column being built.
pub(crate) enum Column {
    Text(Field, Text),
    Int32(Field, Int32Builder),
    Flag(UInt16Builder),
    Mapq(UInt8Builder),
    /// Dictionary keys of `rname` or `rnext` (the values: the header's names).
    Name(Field, Int32Builder),
    Tag(TagColumn),
}

impl Column {
    pub(crate) fn new(field: Field) -> Column {
        match field {
            Field::Qname | Field::Cigar | Field::Seq | Field::Qual => {
                Column::Text(field, Text::new())
            }
            Field::Pos | Field::Pnext | Field::Tlen | Field::End => {
                Column::Int32(field, Int32Builder::new())
            }
            Field::Flag => Column::Flag(UInt16Builder::new()),
            Field::Mapq => Column::Mapq(UInt8Builder::new()),
            Field::Rname | Field::Rnext => Column::Name(field, Int32Builder::new()),
        }
    }

    /// Appends `record`'s value; `base` is 1 for 1-based positions, 0 for 0-based.
    pub(crate) fn push(
        &mut self,
        record: &RecordRef<'_>,
        base: i64,
        scratch: &mut Vec<u8>,
    ) -> Result<(), Error> {
        let stored = record.stored_coordinates();
        let position = |p: i32| (p >= 0).then(|| i64::from(p) + base).and_then(to_i32);
        match self {
            Column::Flag(b) => b.append_value(record.flags().bits()),
            Column::Mapq(b) => b.append_option((record.mapq() != 255).then(|| record.mapq())),
            Column::Name(field, b) => {
                let id = match field {
                    Field::Rname => stored.ref_id,
                    _ => stored.mate_ref_id,
                };
                b.append_option((id >= 0).then_some(id));
            }
            Column::Int32(field, b) => b.append_option(match field {
                Field::Pos => position(stored.pos),
                Field::Pnext => position(stored.mate_pos),
                Field::Tlen => Some(record.tlen()),
                // noodles' alignment end, 1-based: the start for a record covering no
                // reference base (no CIGAR, insertions only), else start + span - 1.
                _ => (stored.pos >= 0)
                    .then(|| i64::from(stored.pos) + record.cigar().reference_len().max(1) as i64)
                    .and_then(to_i32),
            }),
            Column::Text(field, b) => match field {
                Field::Qname => match record.name() {
                    b"*" => b.push_null(),
                    name => b.push_bytes(name),
                },
                Field::Cigar => {
                    let cigar = record.cigar();
                    if cigar.is_empty() {
                        b.push_null();
                    } else {
                        b.push_cigar(cigar);
                    }
                }
                Field::Seq => b.push_bases(record.seq_packed(), record.seq_len()),
                _ => match record.qual() {
                    [] | [0xff, ..] => b.push_null(),
                    qual => b.push_qualities(qual),
                },
            },
            Column::Tag(column) => {
                let value = crate::tag::find(record.aux(), column.tag).map_err(|at| {
                    Error::Read(format!(
                        "corrupt aux data at byte {} of the record named {}",
                        record.aux_offset() + at,
                        String::from_utf8_lossy(record.name())
                    ))
                })?;
                column.push(value, scratch);
            }
        }
        Ok(())
    }

    pub(crate) fn finish(&mut self, names: &ArrayRef) -> Result<ArrayRef, Error> {
        Ok(match self {
            Column::Text(_, b) => b.finish()?,
            Column::Int32(_, b) => Arc::new(b.finish()),
            Column::Flag(b) => Arc::new(b.finish()),
            Column::Mapq(b) => Arc::new(b.finish()),
            Column::Name(_, b) => Arc::new(
                DictionaryArray::<Int32Type>::try_new(b.finish(), Arc::clone(names))
                    .map_err(|e| Error::Read(format!("a reference id outside the header: {e}")))?,
            ),
            Column::Tag(t) => t.finish(),
        })
    }
}

fn to_i32(v: i64) -> Option<i32> {
    i32::try_from(v).ok()
}

impl Column {
    /// Bytes held by a string column (0 for others).
    pub(crate) fn bytes(&self) -> usize {
        match self {
            Column::Text(_, t) => t.bytes(),
            _ => 0,
        }
    }
}
