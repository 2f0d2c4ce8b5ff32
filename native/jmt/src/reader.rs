//! The tree's view of LevelDB: committed nodes come from the node cache, from what was fetched for this
//! operation, or from the store's `load(keys) -> records` callback (one Python call per tree level when
//! prefetching a block's paths; one per node only for the rare read off those paths).

use std::cell::RefCell;
use std::collections::HashMap;

use anyhow::{anyhow, bail, Result};
use jmt::storage::{HasPreimage, LeafNode, Node, NodeKey, TreeReader};
use jmt::{KeyHash, OwnedValue, Version};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use crate::cache::NodeCache;
use crate::records::{child_key, db_key, decode, nibble, root_key, Leaf};

pub struct Reader<'a, 'py> {
    py: Python<'py>,
    load: &'a Bound<'py, PyAny>,
    cache: &'a NodeCache,
    /// The version whose root is the empty tree though nothing is stored for it (an empty store).
    empty_base: Option<Version>,
    fetched: RefCell<HashMap<NodeKey, Node>>,
    /// Key and value of every leaf record read, by key hash.
    leaves: RefCell<HashMap<KeyHash, Leaf>>,
}

impl<'a, 'py> Reader<'a, 'py> {
    pub fn new(
        py: Python<'py>,
        load: &'a Bound<'py, PyAny>,
        cache: &'a NodeCache,
        empty_base: Option<Version>,
    ) -> Self {
        Reader {
            py,
            load,
            cache,
            empty_base,
            fetched: RefCell::new(HashMap::new()),
            leaves: RefCell::new(HashMap::new()),
        }
    }

    pub fn take_leaves(&self) -> HashMap<KeyHash, Leaf> {
        self.leaves.take()
    }

    fn is_empty_base(&self, key: &NodeKey) -> bool {
        self.empty_base == Some(key.version()) && key.nibble_path().num_nibbles() == 0
    }

    fn known(&self, key: &NodeKey) -> Option<Node> {
        if self.is_empty_base(key) {
            return Some(Node::Null);
        }
        if let Some(node) = self.fetched.borrow().get(key) {
            return Some(node.clone());
        }
        self.cache.get(key).cloned()
    }

    fn is_known(&self, key: &NodeKey) -> bool {
        self.is_empty_base(key) || self.fetched.borrow().contains_key(key) || self.cache.get(key).is_some()
    }

    /// The children of `key` if it is a known internal node, as (nibble, child version), without a copy.
    fn known_children(&self, key: &NodeKey) -> Option<Vec<(u8, Version)>> {
        let children = |node: &Node| match node {
            Node::Internal(n) => Some(n.children_sorted().map(|(nib, c)| (u8::from(nib), c.version)).collect()),
            _ => None,
        };
        if let Some(node) = self.fetched.borrow().get(key) {
            return children(node);
        }
        self.cache.get(key).and_then(children)
    }

    /// Read `keys` (none of them known) with one call to `load`; absent ones are left out.
    fn fetch(&self, keys: &[NodeKey]) -> Result<()> {
        if keys.is_empty() {
            return Ok(());
        }
        let py_keys = PyList::new(self.py, keys.iter().map(|k| PyBytes::new(self.py, &db_key(k))))
            .map_err(|e| anyhow!("{e}"))?;
        let records: Vec<Option<Bound<'py, PyBytes>>> = self
            .load
            .call1((py_keys,))
            .and_then(|r| r.extract())
            .map_err(|e| anyhow!("reading tree nodes: {e}"))?;
        if records.len() != keys.len() {
            bail!("load returned {} records for {} keys", records.len(), keys.len());
        }
        let mut fetched = self.fetched.borrow_mut();
        let mut leaves = self.leaves.borrow_mut();
        for (key, record) in keys.iter().zip(records) {
            if let Some(record) = record {
                let (node, leaf) = decode(record.as_bytes())?;
                if let (Node::Leaf(l), Some(leaf)) = (&node, leaf) {
                    leaves.insert(l.key_hash(), leaf);
                }
                fetched.insert(key.clone(), node);
            }
        }
        Ok(())
    }

    /// Fetch every stored node on the paths of `key_hashes` (sorted) from the root at `root`, one tree
    /// level per `load` call, so that the update that follows reads nothing else from LevelDB but the
    /// siblings a deletion folds up.
    pub fn prefetch(&self, root: NodeKey, key_hashes: &[KeyHash]) -> Result<()> {
        let mut frontier = vec![(root, 0usize, key_hashes.len())];
        let mut depth = 0usize;
        while !frontier.is_empty() {
            let missing: Vec<NodeKey> =
                frontier.iter().filter(|(k, _, _)| !self.is_known(k)).map(|(k, _, _)| k.clone()).collect();
            self.fetch(&missing)?;
            let mut next = Vec::new();
            for (key, lo, hi) in frontier {
                let Some(children) = self.known_children(&key) else { continue };
                let mut i = lo;
                for (n, version) in children {
                    while i < hi && nibble(&key_hashes[i].0, depth) < n {
                        i += 1;
                    }
                    let start = i;
                    while i < hi && nibble(&key_hashes[i].0, depth) == n {
                        i += 1;
                    }
                    if i > start {
                        next.push((child_key(&key, version, n), start, i));
                    }
                }
            }
            frontier = next;
            depth += 1;
        }
        Ok(())
    }

    /// The leaf holding `key_hash` in the tree at `version`, if any, read down from its root.
    pub fn find_leaf(&self, version: Version, key_hash: KeyHash) -> Result<Option<NodeKey>> {
        let mut key = root_key(version);
        let mut depth = 0usize;
        loop {
            match self.get_node(&key)? {
                Node::Null => return Ok(None),
                Node::Leaf(leaf) => return Ok((leaf.key_hash() == key_hash).then_some(key)),
                Node::Internal(node) => {
                    let n = nibble(&key_hash.0, depth);
                    let Some((_, child)) = node.children_sorted().find(|(nib, _)| u8::from(*nib) == n) else {
                        return Ok(None);
                    };
                    key = child_key(&key, child.version, n);
                    depth += 1;
                }
            }
        }
    }
}

impl TreeReader for Reader<'_, '_> {
    fn get_node_option(&self, key: &NodeKey) -> Result<Option<Node>> {
        if let Some(node) = self.known(key) {
            return Ok(Some(node));
        }
        self.fetch(std::slice::from_ref(key))?;
        Ok(self.fetched.borrow().get(key).cloned())
    }

    fn get_value_option(&self, max_version: Version, key_hash: KeyHash) -> Result<Option<OwnedValue>> {
        if self.find_leaf(max_version, key_hash)?.is_none() {
            return Ok(None);
        }
        Ok(self.leaves.borrow().get(&key_hash).map(|l| l.value.clone()))
    }

    fn get_rightmost_leaf(&self) -> Result<Option<(NodeKey, LeafNode)>> {
        bail!("the store never restores a tree from chunks")
    }
}

impl HasPreimage for Reader<'_, '_> {
    /// Only for leaves this reader has read: a proof reads a leaf before it asks for its key.
    fn preimage(&self, key_hash: KeyHash) -> Result<Option<Vec<u8>>> {
        Ok(self.leaves.borrow().get(&key_hash).map(|l| l.key.clone()))
    }
}

impl Reader<'_, '_> {
    /// Walk the whole tree at `version`, one tree level per `load`: every node's key and, in key-hash
    /// order, every leaf's (key, value).
    pub fn walk(&self, version: Version) -> Result<(Vec<NodeKey>, Vec<(Vec<u8>, Vec<u8>)>)> {
        let mut keys = Vec::new();
        let mut leaves = Vec::new();
        let mut frontier = vec![root_key(version)];
        while !frontier.is_empty() {
            let missing: Vec<NodeKey> = frontier.iter().filter(|k| !self.is_known(k)).cloned().collect();
            self.fetch(&missing)?;
            let mut next = Vec::new();
            for key in frontier {
                match self.known(&key).ok_or_else(|| anyhow!("store corrupt: missing tree node"))? {
                    Node::Null => {}
                    Node::Leaf(leaf) => {
                        let l = self.leaves.borrow_mut().remove(&leaf.key_hash());
                        let l = l.ok_or_else(|| anyhow!("store corrupt: leaf without its record"))?;
                        leaves.push((leaf.key_hash(), l.key, l.value));
                    }
                    Node::Internal(node) => {
                        for (nib, child) in node.children_sorted() {
                            next.push(child_key(&key, child.version, u8::from(nib)));
                        }
                    }
                }
                keys.push(key);
            }
            self.fetched.borrow_mut().clear();
            frontier = next;
        }
        leaves.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        Ok((keys, leaves.into_iter().map(|(_, k, v)| (k, v)).collect()))
    }
}
