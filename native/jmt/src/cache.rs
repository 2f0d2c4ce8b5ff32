//! Committed internal nodes kept in memory between blocks.
//!
//! Nodes of the latest tree down to depth d are pinned (nearly every block rewrites them, and there are at
//! most 1 + 16 + ... + 16^d of them, d chosen to keep that under half the capacity); the others leave
//! oldest-inserted first. A node replaced or pruned leaves at commit.

use std::collections::{HashMap, VecDeque};

use jmt::storage::{Node, NodeKey};

use crate::records::nibble_count;

pub struct NodeCache {
    nodes: HashMap<NodeKey, Node>,
    order: VecDeque<NodeKey>,
    capacity: usize,
    pinned_depth: usize,
}

impl NodeCache {
    pub fn new(capacity: usize) -> Self {
        let (mut depth, mut total) = (0usize, 1usize);
        while total + 16usize.pow(depth as u32 + 1) <= capacity / 2 {
            depth += 1;
            total += 16usize.pow(depth as u32);
        }
        NodeCache { nodes: HashMap::new(), order: VecDeque::new(), capacity, pinned_depth: depth }
    }

    pub fn get(&self, key: &NodeKey) -> Option<&Node> {
        self.nodes.get(key)
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn add(&mut self, nodes: Vec<(NodeKey, Node)>) {
        if self.capacity == 0 {
            return;
        }
        for (key, node) in nodes {
            if nibble_count(&key) > self.pinned_depth {
                self.order.push_back(key.clone());
            }
            self.nodes.insert(key, node);
        }
        while self.nodes.len() > self.capacity {
            match self.order.pop_front() {
                Some(key) => {
                    self.nodes.remove(&key);
                }
                None => break,
            }
        }
        if self.order.len() > 2 * self.nodes.len() + 4096 {
            let nodes = &self.nodes;
            self.order.retain(|k| nodes.contains_key(k));
        }
    }

    pub fn discard<'a>(&mut self, keys: impl Iterator<Item = &'a NodeKey>) {
        for key in keys {
            self.nodes.remove(key);
        }
    }
}
