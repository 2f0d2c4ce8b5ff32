//! `sdk.store._jmt`: the Jellyfish Merkle tree of the `jmt` crate over the store's LevelDB, and the `ics23`
//! verifier for its proofs. The tree never touches LevelDB itself: it reads committed nodes through the
//! store's `load` callback, puts what a version writes into the block's one write batch through the
//! batch's `put`, and returns what it makes stale. See sdk/store/README.md.

mod cache;
mod reader;
mod records;

use std::collections::HashMap;

use anyhow::{anyhow, Result};
use jmt::storage::{Node, NodeKey};
use jmt::{KeyHash, OwnedValue, Sha256Jmt, Version};
use prost::Message;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use sha2::Sha256;

use cache::NodeCache;
use reader::Reader;
use records::{db_key, encode, node_key_from_db, root_key};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn corrupt(e: anyhow::Error) -> PyErr {
    PyRuntimeError::new_err(format!("{e:#}"))
}

/// A computed, unwritten version: what the cache takes in at commit.
struct Staged {
    version: Version,
    internal: Vec<(NodeKey, Node)>,
    stale: Vec<NodeKey>,
}

/// The tree of one store: its node cache and at most one staged version.
#[pyclass(module = "sdk.store._jmt", unsendable)]
struct Tree {
    load: PyObject,
    cache: NodeCache,
    staged: Option<Staged>,
}

/// (key, value or None to delete), as the store passes them: bytes read in place, copied once.
type Update<'py> = (Bound<'py, PyBytes>, Option<Bound<'py, PyBytes>>);

#[pymethods]
impl Tree {
    /// `load(keys: list[bytes]) -> list[bytes | None]` reads committed node records by DB key.
    #[new]
    fn new(load: PyObject, cache_size: usize) -> Self {
        Tree { load, cache: NodeCache::new(cache_size), staged: None }
    }

    /// Compute `version` from the tree at `version - 1` (the empty tree if `empty_base`) and `changes`
    /// (distinct keys; None deletes), handing each (DB key, record) the version writes to `put` (the
    /// block's write batch). Returns (root hash, [DB key] made stale); the version stays staged until
    /// `commit` or another `apply`.
    fn apply<'py>(
        &mut self,
        py: Python<'py>,
        version: Version,
        changes: Vec<Update<'py>>,
        empty_base: bool,
        put: Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyList>)> {
        self.staged = None;
        if version == 0 {
            return Err(PyValueError::new_err("version 0 is the empty tree; versions start at 1"));
        }
        let load = self.load.bind(py);
        let base = version - 1;
        let reader = Reader::new(py, load, &self.cache, empty_base.then_some(base));
        let mut by_hash: HashMap<KeyHash, (Vec<u8>, Option<Vec<u8>>)> = HashMap::with_capacity(changes.len());
        for (key, value) in changes {
            let key = key.as_bytes();
            by_hash.insert(KeyHash::with::<Sha256>(key), (key.to_vec(), value.map(|v| v.as_bytes().to_vec())));
        }
        let mut hashes: Vec<KeyHash> = by_hash.keys().copied().collect();
        hashes.sort_unstable();
        reader.prefetch(root_key(base), &hashes).map_err(corrupt)?;

        let tree = Sha256Jmt::new(&reader);
        let has_delete = by_hash.values().any(|(_, v)| v.is_none());
        let (root, batch) = if hashes.is_empty() || has_delete {
            let set: Vec<(KeyHash, Option<OwnedValue>)> =
                hashes.iter().map(|h| (*h, by_hash[h].1.clone())).collect();
            tree.put_value_set(set, version)
        } else {
            // The batched update hashes each touched node once; it takes no deletions.
            let set: Vec<(KeyHash, OwnedValue)> =
                hashes.iter().map(|h| (*h, by_hash[h].1.clone().unwrap())).collect();
            tree.batch_put_value_sets(vec![set], None, version).map(|(roots, b)| (roots[0], b))
        }
        .map_err(corrupt)?;

        let moved = reader.take_leaves();
        let mut internal = Vec::new();
        for (key, node) in batch.node_batch.nodes() {
            let record = match node {
                Node::Leaf(leaf) => {
                    let kh = leaf.key_hash();
                    let (k, v) = match by_hash.get(&kh) {
                        Some((k, Some(v))) => (k.as_slice(), v.as_slice()),
                        _ => {
                            let l = moved.get(&kh).ok_or_else(|| corrupt(anyhow!("a moved leaf was never read")))?;
                            (l.key.as_slice(), l.value.as_slice())
                        }
                    };
                    encode(node, Some((k, v)))
                }
                _ => {
                    internal.push((key.clone(), node.clone()));
                    encode(node, None)
                }
            };
            put.call1((PyBytes::new(py, &db_key(key)), PyBytes::new(py, &record)))?;
        }
        let stale: Vec<NodeKey> = batch.stale_node_index_batch.iter().map(|s| s.node_key.clone()).collect();
        let stale_keys = PyList::new(py, stale.iter().map(|k| PyBytes::new(py, &db_key(k))))?;
        self.staged = Some(Staged { version, internal, stale });
        Ok((PyBytes::new(py, &root.0), stale_keys))
    }

    /// The staged version was written: its new internal nodes join the cache, the nodes it replaced and
    /// the previous root (an empty block copies it without replacing it) leave.
    fn commit(&mut self) -> PyResult<()> {
        let st = self.staged.take().ok_or_else(|| PyValueError::new_err("nothing staged"))?;
        self.cache.discard(st.stale.iter());
        self.cache.discard(std::iter::once(&root_key(st.version - 1)));
        self.cache.add(st.internal);
        Ok(())
    }

    fn discard(&mut self) {
        self.staged = None;
    }

    /// Drop pruned nodes (DB keys) from the cache.
    fn forget(&mut self, keys: Vec<Bound<'_, PyBytes>>) -> PyResult<()> {
        let keys: Vec<NodeKey> =
            keys.iter().map(|k| node_key_from_db(k.as_bytes())).collect::<Result<_>>().map_err(corrupt)?;
        self.cache.discard(keys.iter());
        Ok(())
    }

    fn cached_nodes(&self) -> usize {
        self.cache.len()
    }

    /// Root hash of a stored version.
    fn root_hash<'py>(&self, py: Python<'py>, version: Version) -> PyResult<Bound<'py, PyBytes>> {
        let reader = Reader::new(py, self.load.bind(py), &self.cache, None);
        let root = Sha256Jmt::new(&reader).get_root_hash(version).map_err(corrupt)?;
        Ok(PyBytes::new(py, &root.0))
    }

    /// The value of `key` in the tree at `version`, or None.
    fn get<'py>(&self, py: Python<'py>, key: &[u8], version: Version) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let reader = Reader::new(py, self.load.bind(py), &self.cache, None);
        let value = Sha256Jmt::new(&reader).get(KeyHash::with::<Sha256>(key), version).map_err(corrupt)?;
        Ok(value.map(|v| PyBytes::new(py, &v)))
    }

    /// (value or None, `cosmos.ics23.v1.CommitmentProof` bytes) for `key` at `version`: an existence or
    /// a non-existence proof against that version's root. The empty tree has no such proof.
    fn prove<'py>(
        &self,
        py: Python<'py>,
        key: &[u8],
        version: Version,
    ) -> PyResult<(Option<Bound<'py, PyBytes>>, Bound<'py, PyBytes>)> {
        let reader = Reader::new(py, self.load.bind(py), &self.cache, None);
        let tree = Sha256Jmt::new(&reader);
        if matches!(reader_root(&reader, version)?, Node::Null) {
            return Err(PyValueError::new_err(format!("the tree is empty at version {version}: nothing to prove against")));
        }
        let (value, proof) = tree.get_with_ics23_proof(key.to_vec(), version).map_err(corrupt)?;
        Ok((value.map(|v| PyBytes::new(py, &v)), PyBytes::new(py, &proof.encode_to_vec())))
    }

    /// Every (key, value) of the tree at `version`, in key-hash order (read level by level).
    fn items<'py>(&self, py: Python<'py>, version: Version) -> PyResult<Bound<'py, PyList>> {
        let reader = Reader::new(py, self.load.bind(py), &self.cache, None);
        let out = PyList::empty(py);
        for (key, value) in reader.walk(version).map_err(corrupt)?.1 {
            out.append((PyBytes::new(py, &key), PyBytes::new(py, &value)))?;
        }
        Ok(out)
    }

    /// DB keys of every node of the tree at `version` (checks of pruning, tools).
    fn node_keys<'py>(&self, py: Python<'py>, version: Version) -> PyResult<Bound<'py, PyList>> {
        let reader = Reader::new(py, self.load.bind(py), &self.cache, None);
        let keys = reader.walk(version).map_err(corrupt)?.0;
        PyList::new(py, keys.iter().map(|k| PyBytes::new(py, &db_key(k))))
    }
}

fn reader_root(reader: &Reader, version: Version) -> PyResult<Node> {
    use jmt::storage::TreeReader;
    reader.get_node(&root_key(version)).map_err(corrupt)
}

/// DB key of the root node of `version` (pruning deletes old roots: an empty block's copy is never stale).
#[pyfunction]
fn root_db_key(py: Python<'_>, version: Version) -> Bound<'_, PyBytes> {
    PyBytes::new(py, &db_key(&root_key(version)))
}

/// `cosmos.ics23.v1.ProofSpec` bytes of this tree's proofs.
#[pyfunction]
fn proof_spec(py: Python<'_>) -> Bound<'_, PyBytes> {
    PyBytes::new(py, &jmt::ics23_spec().encode_to_vec())
}

fn decode_proof(proof: &[u8]) -> Option<ics23::CommitmentProof> {
    ics23::CommitmentProof::decode(proof).ok()
}

/// The ics23 crate's verifier: `proof` shows `key` -> `value` under `root` with this tree's spec.
#[pyfunction]
fn verify_membership(proof: &[u8], root: &[u8], key: &[u8], value: &[u8]) -> bool {
    let Some(proof) = decode_proof(proof) else { return false };
    ics23::verify_membership::<ics23::HostFunctionsManager>(&proof, &jmt::ics23_spec(), &root.to_vec(), key, value)
}

/// The ics23 crate's verifier: `proof` shows `key` absent under `root` with this tree's spec.
#[pyfunction]
fn verify_non_membership(proof: &[u8], root: &[u8], key: &[u8]) -> bool {
    let Some(proof) = decode_proof(proof) else { return false };
    ics23::verify_non_membership::<ics23::HostFunctionsManager>(&proof, &jmt::ics23_spec(), &root.to_vec(), key)
}

#[pymodule]
fn _jmt(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Tree>()?;
    m.add_function(wrap_pyfunction!(root_db_key, m)?)?;
    m.add_function(wrap_pyfunction!(proof_spec, m)?)?;
    m.add_function(wrap_pyfunction!(verify_membership, m)?)?;
    m.add_function(wrap_pyfunction!(verify_non_membership, m)?)?;
    m.add("EMPTY_ROOT", PyBytes::new(m.py(), &jmt::JellyfishMerkleTree::<Reader, Sha256>::EMPTY_ROOT.0))?;
    Ok(())
}
