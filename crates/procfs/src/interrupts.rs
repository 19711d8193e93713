//! /proc/interrupts: per-CPU counts for every IRQ and architecture-specific
//! interrupt (NMI, LOC, RES, CAL, TLB, ...), with chip and handler names.
//! Reading it sums nothing in the kernel but walks every IRQ descriptor; on
//! machines with thousands of IRQs it is the most expensive system source.

use crate::cpu_table::{self, CpuTable};
use crate::error::ParseError;

/// Parsed /proc/interrupts: rows labelled by IRQ number or mnemonic.
pub type Interrupts = CpuTable;

pub fn parse(buf: &[u8]) -> Result<Interrupts, ParseError> {
    let mut t = Interrupts::default();
    parse_into(buf, &mut t)?;
    Ok(t)
}

pub fn parse_into(buf: &[u8], out: &mut Interrupts) -> Result<(), ParseError> {
    cpu_table::parse_into(buf, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ParseErrorKind;

    const SAMPLE: &[u8] = b"           CPU0       CPU1       \n 24:          1          0  IO-APIC   5-edge      ACPI:Ged\n 36:          0       4830 PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0\nNMI:          0          0   Non-maskable interrupts\nLOC:       5591       6095   Local timer interrupts\nERR:          0\nMIS:          0\n";

    #[test]
    fn exact_values() {
        let t = parse(SAMPLE).unwrap();
        assert_eq!(t.cpus(), &[0, 1]);
        assert_eq!(t.len(), 6);
        let r = t.row(1).unwrap();
        assert_eq!(r.label, "36");
        assert_eq!(r.counts, &[0, 4830]);
        assert_eq!(r.total, 4830);
        assert_eq!(
            r.description,
            "PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0"
        );
        let loc = t.find("LOC").unwrap();
        assert_eq!(
            (loc.total, loc.description),
            (11686, "Local timer interrupts")
        );
        let err = t.find("ERR").unwrap();
        assert_eq!((err.counts, err.description), (&[0u64][..], ""));
        assert_eq!(t.grand_total(), 1 + 4830 + 11686);
    }

    #[test]
    fn offline_cpu_column_is_absent() {
        let t = parse(b"  CPU0 CPU2\n 1: 5 7 x\n").unwrap();
        assert_eq!(t.cpus(), &[0, 2]);
        assert_eq!(t.row(0).unwrap().counts, &[5, 7]);
    }

    #[test]
    fn bad_header() {
        let e = parse(b"  CPU0 GPU1\n").unwrap_err();
        assert_eq!(
            (e.line, e.field, e.kind),
            (1, "header", ParseErrorKind::Invalid)
        );
    }

    #[test]
    fn row_without_colon() {
        let e = parse(b"  CPU0\n 24 1\n").unwrap_err();
        assert_eq!((e.line, e.field), (2, "label"));
    }

    #[test]
    fn empty_file() {
        assert_eq!(parse(b"").unwrap_err().kind, ParseErrorKind::Missing);
    }

    #[test]
    fn non_utf8_description_is_shown_not_trusted() {
        let t = parse(b" CPU0\n 1: 3 dev\xff\n").unwrap();
        assert_eq!(t.row(0).unwrap().description, "dev?");
    }
}
