//! How nodes are keyed and stored in LevelDB.
//!
//! Node DB key: `b"n" ‖ borsh(NodeKey)` (u64 LE version, u64 LE nibble count, u32 LE byte count, packed
//! nibbles). Record: `borsh(Node)`; a leaf's record goes on with `u32 BE key length ‖ key ‖ value`, so a
//! version's leaves hold its contents (historic reads, proofs' preimages) and are pruned with them.

use anyhow::{bail, Context, Result};
use borsh::BorshDeserialize;
use jmt::storage::{Node, NodeKey};

pub const NODE_PREFIX: u8 = b'n';

pub fn db_key(node_key: &NodeKey) -> Vec<u8> {
    let mut out = Vec::with_capacity(32);
    out.push(NODE_PREFIX);
    borsh::to_writer(&mut out, node_key).expect("writing to a Vec cannot fail");
    out
}

pub fn node_key_from_db(key: &[u8]) -> Result<NodeKey> {
    if key.first() != Some(&NODE_PREFIX) {
        bail!("not a node key");
    }
    NodeKey::try_from_slice(&key[1..]).context("corrupt node key")
}

/// The root's key at `version` (the empty nibble path).
pub fn root_key(version: u64) -> NodeKey {
    let mut buf = Vec::with_capacity(20);
    buf.extend_from_slice(&version.to_le_bytes());
    buf.extend_from_slice(&0u64.to_le_bytes());
    buf.extend_from_slice(&0u32.to_le_bytes());
    NodeKey::try_from_slice(&buf).expect("a well-formed empty path")
}

/// The key of the child in slot `nibble` of the node at `parent`, written at `version`.
pub fn child_key(parent: &NodeKey, version: u64, nibble: u8) -> NodeKey {
    let encoded = borsh::to_vec(parent).expect("writing to a Vec cannot fail");
    let count = u64::from_le_bytes(encoded[8..16].try_into().unwrap()) as usize;
    let mut bytes = encoded[20..].to_vec();
    if count % 2 == 0 {
        bytes.push(nibble << 4);
    } else {
        *bytes.last_mut().unwrap() |= nibble;
    }
    let mut buf = Vec::with_capacity(20 + bytes.len());
    buf.extend_from_slice(&version.to_le_bytes());
    buf.extend_from_slice(&((count + 1) as u64).to_le_bytes());
    buf.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    buf.extend_from_slice(&bytes);
    NodeKey::try_from_slice(&buf).expect("a well-formed nibble path")
}

/// Nibble `depth` of a key hash, high nibble of each byte first.
pub fn nibble(key_hash: &[u8; 32], depth: usize) -> u8 {
    let byte = key_hash[depth / 2];
    if depth % 2 == 0 {
        byte >> 4
    } else {
        byte & 0x0f
    }
}

pub struct Leaf {
    pub key: Vec<u8>,
    pub value: Vec<u8>,
}

/// A stored record: the node, and for a leaf its key and value.
pub fn decode(record: &[u8]) -> Result<(Node, Option<Leaf>)> {
    let mut rest = record;
    let node = Node::deserialize(&mut rest).context("corrupt tree node")?;
    match node {
        Node::Leaf(_) => {
            if rest.len() < 4 {
                bail!("corrupt leaf record");
            }
            let n = u32::from_be_bytes(rest[..4].try_into().unwrap()) as usize;
            if rest.len() < 4 + n {
                bail!("corrupt leaf record");
            }
            let leaf = Leaf { key: rest[4..4 + n].to_vec(), value: rest[4 + n..].to_vec() };
            Ok((node, Some(leaf)))
        }
        _ if rest.is_empty() => Ok((node, None)),
        _ => bail!("trailing bytes after a tree node"),
    }
}

pub fn encode(node: &Node, leaf: Option<(&[u8], &[u8])>) -> Vec<u8> {
    let mut out = borsh::to_vec(node).expect("writing to a Vec cannot fail");
    if let Some((key, value)) = leaf {
        out.reserve(4 + key.len() + value.len());
        out.extend_from_slice(&(key.len() as u32).to_be_bytes());
        out.extend_from_slice(key);
        out.extend_from_slice(value);
    }
    out
}

pub fn nibble_count(node_key: &NodeKey) -> usize {
    node_key.nibble_path().num_nibbles()
}
