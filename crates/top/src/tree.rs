//! A list ordered as a tree, for the process tree and the cgroup tree:
//! each node under its parent, siblings in the order given, a folded node
//! hiding its descendants, and the branch drawn before each name.

/// One row of a tree: the node, the branch drawn before it (`├─ `, `│  └─ `),
/// and how many nodes folding it hides.
pub struct Placed {
    pub node: usize,
    pub branch: String,
    pub folded: usize,
}

/// The nodes depth-first from `roots`, each one's `children` (in their
/// order) after it, unless `folded(node)`. A node reached twice (a loop in
/// the data) is placed once.
pub fn order(
    children: &[Vec<usize>],
    roots: &[usize],
    folded: impl Fn(usize) -> bool,
) -> Vec<Placed> {
    let mut out = Vec::with_capacity(children.len());
    let mut placed = vec![false; children.len()];
    // Each frame: (node, prefix for its children, whether it is its
    // parent's last child, whether it is a root).
    let mut stack: Vec<(usize, String, bool, bool)> = roots
        .iter()
        .rev()
        .map(|&r| (r, String::new(), true, true))
        .collect();
    while let Some((i, prefix, last, root)) = stack.pop() {
        if std::mem::replace(&mut placed[i], true) {
            continue;
        }
        let branch = if root {
            String::new()
        } else {
            format!("{prefix}{}", if last { "└─ " } else { "├─ " })
        };
        let fold = folded(i);
        out.push(Placed {
            node: i,
            branch,
            folded: if fold { count_below(children, i) } else { 0 },
        });
        if fold {
            continue;
        }
        let child_prefix = if root {
            String::new()
        } else {
            format!("{prefix}{}", if last { "   " } else { "│  " })
        };
        let kids = &children[i];
        for (k, &c) in kids.iter().enumerate().rev() {
            stack.push((c, child_prefix.clone(), k + 1 == kids.len(), false));
        }
    }
    out
}

/// The nodes below `i`, bounded: a loop in the data must not spin.
pub fn count_below(children: &[Vec<usize>], i: usize) -> usize {
    let mut n = 0;
    let mut stack = children[i].clone();
    while let Some(c) = stack.pop() {
        n += 1;
        if n >= children.len() {
            break;
        }
        stack.extend(&children[c]);
    }
    n
}
