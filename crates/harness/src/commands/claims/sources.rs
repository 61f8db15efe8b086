//! Where each claim comes from: the source documents of the project (`shared/seeds/`, Chinese)
//! quoted word for word with a translation, and the papers cited by authors, year, title, venue
//! and the part of the paper the claim is taken from. A paper's claim is paraphrased (marked as
//! such) unless its words are quoted.

/// A source: how CLAIMS.md names it, and the claim in its own words where they are quoted.
#[derive(Debug, Clone, Copy)]
pub struct Source {
    /// The citation.
    pub cite: &'static str,
    /// The claim word for word in the source's language (empty: paraphrased, see `english`).
    pub original: &'static str,
    /// The English translation of `original`, or the paraphrase when `original` is empty.
    pub english: &'static str,
}

impl Source {
    /// A claim quoted word for word (`original`) with its English translation.
    const fn quote(cite: &'static str, original: &'static str, english: &'static str) -> Source {
        Source {
            cite,
            original,
            english,
        }
    }

    /// A claim in other words than the source's (`english` alone).
    const fn paraphrase(cite: &'static str, english: &'static str) -> Source {
        Source::quote(cite, "", english)
    }

    /// One Markdown paragraph: the quote, its translation and the citation.
    pub fn markdown(&self) -> String {
        if self.original.is_empty() {
            format!("{} (paraphrased) — {}", self.english, self.cite)
        } else if self.original == self.english {
            format!("\"{}\" — {}", self.original, self.cite)
        } else {
            format!(
                "「{}」 (translation: \"{}\") — {}",
                self.original, self.english, self.cite
            )
        }
    }
}

/// The Godot article (seed 000).
pub const GODOT: &str = "an article on Godot 4.x SoftBody3D, in Chinese, author, date and URL unknown (shared/seeds/000_0f9a7952f13f0509.txt)";
/// The long Unity soft-body tutorial (seed 002).
pub const UNITY: &str = "a Unity soft-body tutorial, in Chinese, author, date and URL unknown (shared/seeds/002_c1bd6b24f1d9d2b5.txt)";
/// Müller et al. 2007.
pub const MUELLER_2007: &str = "M. Müller, B. Heidelberger, M. Hennix, J. Ratcliff (2007), \"Position based dynamics\", Journal of Visual Communication and Image Representation 18(2), 109-118, §3.3";
/// Müller et al. 2007, the k' rule.
const MUELLER_K_PRIME: &str = "M. Müller, B. Heidelberger, M. Hennix, J. Ratcliff (2007), \"Position based dynamics\", Journal of Visual Communication and Image Representation 18(2), 109-118, §3.3";
/// Macklin et al. 2014, §4.2.
const FLEX_2014_42: &str = "M. Macklin, M. Müller, N. Chentanez, T.-Y. Kim (2014), \"Unified particle physics for real-time applications\", ACM Transactions on Graphics 33(4) (SIGGRAPH 2014), article 153, §4.2";
/// Macklin et al. 2016.
pub const XPBD_2016: &str = "M. Macklin, M. Müller, N. Chentanez (2016), \"XPBD: position-based simulation of compliant constrained dynamics\", Proc. Motion in Games (MIG '16), 49-54";
/// Macklin et al. 2014.
pub const FLEX_2014: &str = "M. Macklin, M. Müller, N. Chentanez, T.-Y. Kim (2014), \"Unified particle physics for real-time applications\", ACM Transactions on Graphics 33(4) (SIGGRAPH 2014), article 153";
/// Macklin et al. 2019.
pub const SMALL_STEPS_2019: &str = "M. Macklin, K. Storey, M. Lu, P. Terdiman, N. Chentanez, S. Jeschke, M. Müller (2019), \"Small steps in physics simulation\", Proc. ACM SIGGRAPH/Eurographics Symposium on Computer Animation (SCA '19)";
/// Wang 2015.
pub const WANG_2015: &str = "H. Wang (2015), \"A Chebyshev semi-iterative approach for accelerating projective and position-based dynamics\", ACM Transactions on Graphics 34(6) (SIGGRAPH Asia 2015), article 246, abstract";
/// Fratarcangeli et al. 2016.
pub const VIVACE_2016: &str = "M. Fratarcangeli, V. Tibaldo, F. Pellacini (2016), \"Vivace: a practical Gauss-Seidel method for stable soft body dynamics\", ACM Transactions on Graphics 35(6) (SIGGRAPH Asia 2016), article 214";
/// Young's theorem, as given by Varga and Saad.
pub const YOUNG: &str = "D. M. Young (1954), \"Iterative methods for solving partial difference equations of elliptic type\", Trans. AMS 76, 92-111; as stated in Y. Saad (2003), \"Iterative methods for sparse linear systems\", 2nd ed., SIAM, §4.2.5 (consistently ordered matrices)";

/// C1.
pub const C1: Source = Source::quote(GODOT, "实测同样 500 顶点，全局 CSR 求解 4~6 轮迭代的形态保持，能和边约束 20 轮打平。", "Measured at the same 500 vertices, the shape preservation of the global CSR solve at 4-6 iterations matches that of edge constraints at 20 iterations.");
/// C2.
pub const C2: Source = Source::quote(GODOT, "如果允许一个约束的修正影响其他约束（Gauss-Seidel 风格按序更新），收敛远好于 Jacobi 式的\"所有约束各改各的再平均\"。", "If one constraint's correction is allowed to affect the other constraints (Gauss-Seidel style sequential updates), convergence is far better than the Jacobi style of \"every constraint makes its own change, then average\".");
/// C3.
pub const C3: Source = Source::quote(GODOT, "500 顶点软体 + 8 迭代，物理耗时约 0.6ms；顶点翻倍到 1000，耗时约 2.4ms——超线性增长主要来自 CSR 求解的内存访问模式，缓存不友好是稀疏矩阵的老毛病。", "A 500-vertex soft body with 8 iterations takes about 0.6 ms of physics; doubling the vertices to 1000 takes about 2.4 ms — the superlinear growth comes mainly from the memory access pattern of the CSR solve; cache-unfriendliness is the old ailment of sparse matrices. (Measured on an M-series Mac, Godot 4.3.)");
/// C4.
pub const C4: Source = Source::quote(GODOT, "迭代数 × 顶点数 × 边数就是软体的成本公式，这也是为什么顶点数一上去帧时间立刻爆炸。", "Iterations x vertices x edges is the cost formula of a soft body, which is why the frame time explodes as soon as the vertex count goes up.");
/// C5.
pub const C5: Source = Source::quote(GODOT, "把每条边都过一遍是一轮迭代，布料通常要十几轮才能不\"橡皮筋\"。", "One pass over every edge is one iteration; cloth usually needs ten-odd iterations before it stops being \"rubber bands\".");
/// C6 (two sources).
pub const C6: [Source; 2] = [
    Source::quote(GODOT, "这意味着软体天然不产生能量爆炸（位置投影怎么改都不会把速度推高到离谱），稳定性极好", "This means a soft body by nature produces no energy explosion (however the position projection changes things, it never pushes the velocity to absurd values); its stability is excellent"),
    Source::quote(UNITY, "这种方法最大的优点是无条件稳定。无论时间步长多大，系统都不会爆炸（但可能会变得很“软”或失真）。", "The greatest advantage of this method is that it is unconditionally stable. However large the time step, the system never explodes (though it may become very \"soft\" or distorted)."),
];
/// C7 (two sentences of one source).
pub const C7: [Source; 2] = [
    Source::quote(UNITY, "半隐式欧拉法：先更新速度，再用新速度更新位置，比显式欧拉稳定一个数量级，是游戏物理中质点更新的主流选择。", "Semi-implicit Euler: update the velocity first, then the position with the new velocity; an order of magnitude more stable than explicit Euler, the mainstream choice for particle updates in game physics."),
    Source::quote(UNITY, "韦尔莱积分：在游戏物理中非常常见，尤其适用于粒子系统。它利用上一帧的位置和加速度来计算新位置，通常比显式欧拉更稳定。", "Verlet integration: very common in game physics, especially for particle systems. It computes the new position from the previous frame's position and the acceleration, and is usually more stable than explicit Euler."),
];
/// C8.
pub const C8: Source = Source::paraphrase(SMALL_STEPS_2019, "at equal cost, dividing a frame into n substeps of one solver iteration each gives lower constraint error than one step of n iterations (the paper's central comparison, §4-5)");
/// C9.
pub const C9: Source = Source::quote(WANG_2015, "Our experiment further shows position-based dynamics can be accelerated by the Chebyshev approach as well, although the effect is less obvious for tetrahedral meshes.", "Our experiment further shows position-based dynamics can be accelerated by the Chebyshev approach as well, although the effect is less obvious for tetrahedral meshes.");
/// C10 (two papers).
pub const C10: [Source; 2] = [
    Source::paraphrase(MUELLER_K_PRIME, "replacing the stiffness k by k' = 1 - (1 - k)^(1/n_s), n_s the iteration count, makes the error correction, and so the apparent stiffness, independent of the number of iterations (the time-step dependence remains)"),
    Source::paraphrase(XPBD_2016, "XPBD's compliance term removes PBD's dependence of stiffness on iteration count and time step (abstract, §3)"),
];
/// C11.
pub const C11: Source = Source::paraphrase(VIVACE_2016, "graph coloring lets Gauss-Seidel run in parallel, color by color, with convergence close to sequential Gauss-Seidel and far better than Jacobi (§3-4)");
/// C12.
pub const C12: Source = Source::quote(UNITY, "solverIterations：迭代次数越多，约束满足得越好，体积保持和形状恢复越强，但性能开销越大。通常3-5次已足够。", "solverIterations: the more iterations, the better the constraints are satisfied and the stronger the volume preservation and shape recovery, but the higher the performance cost. Usually 3-5 are enough. (Section 5, the elastic jelly ball.)");
/// C13.
pub const C13: Source = Source::paraphrase(FLEX_2014_42, "in PBD's Jacobi iteration, averaging each particle's corrections over its number of constraints (with over-relaxation omega) makes the iteration converge where plain Jacobi may not");
/// C14.
pub const C14: Source = Source::paraphrase(MUELLER_2007, "projecting internal constraints with corrections weighted by inverse mass conserves linear and angular momentum");
/// C15.
pub const C15: Source = Source::paraphrase(YOUNG, "for a consistently ordered matrix the spectral radius of the Gauss-Seidel iteration is the square of the Jacobi iteration's, rho(GS) = rho(J)^2: one Gauss-Seidel sweep is worth two Jacobi sweeps");
/// C16.
pub const C16: Source = Source::paraphrase(MUELLER_2007, "with a plain stiffness factor k per projection, the effective stiffness of PBD depends on the iteration count and on the time step (§3.3)");
/// C17.
pub const C17: Source = Source::paraphrase(VIVACE_2016, "the order in which Gauss-Seidel visits the constraints (natural, shuffled, or color by color) matters little for how fast it converges: the assumption that lets it be reordered by graph coloring for parallel sweeps (§3-4; for linear systems the rate does depend on the ordering in general, Saad 2003, §4.2)");
/// C18.
pub const C18: Source = Source::paraphrase(FLEX_2014_42, "a Jacobi iteration over constraints can fail to converge when constraints are redundant; averaging each particle's corrections by the number of constraints acting on it, with a relaxation omega, makes it converge");

/// C19.
pub const C19: Source = Source::paraphrase(VIVACE_2016, "a Gauss-Seidel solve made parallel by graph coloring stays stable with a small, fixed budget of iterations per frame, where Jacobi-type parallel solvers need more iterations or damping to stay stable (abstract)");
/// C20.
pub const C20: Source = Source::paraphrase(SMALL_STEPS_2019, "substepping with one iteration per substep reduces numerical damping compared with taking fewer, larger steps with more iterations at the same cost (§4-5, the paper's comparison of substeps and iterations)");
