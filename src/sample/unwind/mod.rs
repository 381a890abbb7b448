//! User call stacks and their names: ELF files mapped once (unwind tables, symbols, inlined
//! functions), the module and symbol that hold an address, and stacks unwound from a sample's
//! registers or a blocked thread's stack, interned.

mod elf;
mod regs;
mod stacks;
mod symbols;

pub(crate) use regs::Regs;
pub(crate) use stacks::{
    BLOCKED_STACK_BYTES, Frame, StackId, Stacks, UNMAPPED, read_stack, wait_site,
};
pub(crate) use symbols::{Mapping, Namer, Place, locate, parse_maps};
