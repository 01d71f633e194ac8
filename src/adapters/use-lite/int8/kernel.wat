;; Int8 transformer-encoder kernels: WebAssembly fixed-width SIMD (the final proposal only,
;; so Node 20's V8 runs it; no relaxed SIMD). Compiled by `npx tsx scripts/build-kernel.ts`
;; into kernel-wasm.ts; kernel.ts loads it and owns the memory layout.
;;
;; Every pointer is a byte offset into the exported memory; every matrix is row-major.
;; Pointer 0 is never handed out by the allocator, so `bias = 0` means "no bias".
;;
;; Register budget: V8 on x64 emits SSE/AVX on 16 xmm registers and keeps one as its
;; scratch, so a hot loop has ~15 vector registers. The tiles below are sized to that.
(module
  (memory (export "memory") 1)

  ;; ---------------------------------------------------------------------------------------
  ;; quantize_rows: per-row symmetric quantization of f32 activations to i16.
  ;;   s = max|x| / maxq (1 for an all-zero row); q = nearest(x / s), ties to even;
  ;;   lanes k..kpad-1 are zeroed so qmatmul can run whole 16-wide steps.
  ;; A true division (not x * (1/s)) keeps the result bit-identical to the reference.
  ;; relu != 0 quantizes relu(x) = (x < 0 ? 0 : x) instead of x, the scale taken over the
  ;; ReLU'd values (the FFN's hidden rows go straight from conv1's output). Both cases run
  ;; the same code: every x passes through pmax(x, lo), lo = 0 for ReLU, -inf otherwise,
  ;; and pmax(x, lo) = (x < lo ? lo : x) is x itself for lo = -inf (NaN and -0 included)
  ;; and exactly the JS `if (x < 0) x = 0` for lo = 0 (-0 and NaN kept). One maxps a vector.
  ;; ---------------------------------------------------------------------------------------
  (func $relu_lo (param $x f32) (param $lo f32) (result f32)
    ;; the scalar pmax(x, lo) of quantize_rows' tails: x < lo ? lo : x
    (select (local.get $lo) (local.get $x) (f32.lt (local.get $x) (local.get $lo))))

  (func (export "quantize_rows")
    (param $x i32) (param $rows i32) (param $k i32) (param $kpad i32)
    (param $q i32) (param $scales i32) (param $maxq f32) (param $relu i32)
    (local $r i32) (local $j i32) (local $xr i32) (local $qr i32)
    (local $vmax v128) (local $m f32) (local $s f32) (local $vs v128)
    (local $lo f32) (local $vlo v128)
    (local.set $lo (select (f32.const 0) (f32.const -inf) (local.get $relu)))
    (local.set $vlo (f32x4.splat (local.get $lo)))
    (block $done
      (loop $row
        (br_if $done (i32.ge_u (local.get $r) (local.get $rows)))
        (local.set $xr (i32.add (local.get $x) (i32.shl (i32.mul (local.get $r) (local.get $k)) (i32.const 2))))
        (local.set $qr (i32.add (local.get $q) (i32.shl (i32.mul (local.get $r) (local.get $kpad)) (i32.const 1))))

        ;; pass 1: m = max |x|, four lanes at a time, then the scalar tail
        (local.set $vmax (v128.const i32x4 0 0 0 0))
        (local.set $j (i32.const 0))
        (block $v_done
          (loop $v
            (br_if $v_done (i32.gt_s (i32.add (local.get $j) (i32.const 4)) (local.get $k)))
            (local.set $vmax
              (f32x4.max (local.get $vmax)
                (f32x4.abs (f32x4.pmax (v128.load (i32.add (local.get $xr) (i32.shl (local.get $j) (i32.const 2)))) (local.get $vlo)))))
            (local.set $j (i32.add (local.get $j) (i32.const 4)))
            (br $v)))
        (local.set $m
          (f32.max
            (f32.max (f32x4.extract_lane 0 (local.get $vmax)) (f32x4.extract_lane 1 (local.get $vmax)))
            (f32.max (f32x4.extract_lane 2 (local.get $vmax)) (f32x4.extract_lane 3 (local.get $vmax)))))
        (block $t_done
          (loop $t
            (br_if $t_done (i32.ge_s (local.get $j) (local.get $k)))
            (local.set $m
              (f32.max (local.get $m)
                (f32.abs (call $relu_lo (f32.load (i32.add (local.get $xr) (i32.shl (local.get $j) (i32.const 2)))) (local.get $lo)))))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $t)))

        (local.set $s
          (if (result f32) (f32.gt (local.get $m) (f32.const 0))
            (then (f32.div (local.get $m) (local.get $maxq)))
            (else (f32.const 1))))
        (f32.store (i32.add (local.get $scales) (i32.shl (local.get $r) (i32.const 2))) (local.get $s))
        (local.set $vs (f32x4.splat (local.get $s)))

        ;; pass 2: eight values per step (two f32x4 -> two i32x4 -> one saturating i16x8)
        (local.set $j (i32.const 0))
        (block $q_done
          (loop $qv
            (br_if $q_done (i32.gt_s (i32.add (local.get $j) (i32.const 8)) (local.get $k)))
            (v128.store (i32.add (local.get $qr) (i32.shl (local.get $j) (i32.const 1)))
              (i16x8.narrow_i32x4_s
                (i32x4.trunc_sat_f32x4_s (f32x4.nearest (f32x4.div
                  (f32x4.pmax (v128.load (i32.add (local.get $xr) (i32.shl (local.get $j) (i32.const 2)))) (local.get $vlo))
                  (local.get $vs))))
                (i32x4.trunc_sat_f32x4_s (f32x4.nearest (f32x4.div
                  (f32x4.pmax (v128.load offset=16 (i32.add (local.get $xr) (i32.shl (local.get $j) (i32.const 2)))) (local.get $vlo))
                  (local.get $vs))))))
            (local.set $j (i32.add (local.get $j) (i32.const 8)))
            (br $qv)))
        ;; scalar tail (clamped like the narrowing above)
        (block $qt_done
          (loop $qt
            (br_if $qt_done (i32.ge_s (local.get $j) (local.get $k)))
            (i32.store16 (i32.add (local.get $qr) (i32.shl (local.get $j) (i32.const 1)))
              (i32.trunc_sat_f32_s
                (f32.min (f32.const 32767) (f32.max (f32.const -32768)
                  (f32.nearest (f32.div
                    (call $relu_lo (f32.load (i32.add (local.get $xr) (i32.shl (local.get $j) (i32.const 2)))) (local.get $lo))
                    (local.get $s)))))))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $qt)))
        ;; zero padding up to kpad
        (block $z_done
          (loop $z
            (br_if $z_done (i32.ge_s (local.get $j) (local.get $kpad)))
            (i32.store16 (i32.add (local.get $qr) (i32.shl (local.get $j) (i32.const 1))) (i32.const 0))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $z)))

        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $row))))

  ;; ---------------------------------------------------------------------------------------
  ;; qmatmul: out[r, c] = f32(sum_j q[r, j] * w[c, j]) * scales[r] * wscales[c] + bias[c]
  ;;   or, with acc != 0, out[r, c] = out[r, c] + (that): a sublayer's residual add done in
  ;;   the epilogue, the same f32 steps as computing the product into a buffer and adding
  ;;   that to the state afterwards (f32 addition commutes), so the state is bit-identical.
  ;;
  ;; q is i16 (rows x kpad), w is i8 stored transposed (n x kpad: one row per output column),
  ;; so both operands of every dot product are contiguous. Sums are exact i32:
  ;; |q| <= 4095, |w| <= 127, kpad <= 2048 keeps |sum| < 2^31 in every lane.
  ;;
  ;; Tile: 4 rows x 2 columns, 8 i32x4 accumulators, 8 k per loop iteration: 2 weight
  ;; vectors (v128.load8x8_s: one pmovsxbw from memory, the same as a load plus
  ;; i16x8.extend_low_i8x16_s) and 4 activation vectors, then 8 i32x4.dot_i16x8_s (pmaddwd)
  ;; and 8 adds: each weight vector is used 4 times, each activation vector twice.
  ;;
  ;; Why this shape (measured on the 2-core EPYC, Node 20, 32 x 512 x 1536): TurboFan
  ;; schedules every load of an iteration at its top, so the live vectors are the
  ;; accumulators plus everything one iteration loads, and x64 V8 has 15 usable xmm
  ;; registers. 4 x 2 over 8 k = 8 + 2 + 4 = 14 fits: ~49 GMAC/s. The same tile over 16 k
  ;; per iteration (two halves, the weights loaded once as 16 bytes and widened with
  ;; extend_low/extend_high) needs 8 + 4 + 8 and spills accumulators: ~35-38 GMAC/s.
  ;; 2 x 2 (~45), 3 x 2 (~48), 2 x 4 (~48) fit but reuse less; 5 x 2, 6 x 2, 3 x 3, 4 x 3
  ;; and 4 x 4 spill (~30-33).
  ;; Horizontal sums are done once per tile, four rows at a time, by a transpose-add.
  ;;
  ;; Loop order: column pairs outside, rows inside, so each weight row is read from memory
  ;; once and the activations (rows x kpad x 2 bytes) are re-read from cache. Blocking the
  ;; rows (8 to 128 per block) measured the same up to 256 x 2048 x 2048, so there is none.
  ;; Remainders: a last odd column reuses the tile with both columns pointing at the same
  ;; weight row and only the first stored; the last rows % 4 rows go through a 1 x 2 tile
  ;; (16 k per iteration: 2 + 4 + 2 live vectors, no pressure).
  ;; ---------------------------------------------------------------------------------------
  (func (export "qmatmul")
    (param $q i32) (param $scales i32) (param $rows i32) (param $kpad i32)
    (param $w i32) (param $wscales i32) (param $bias i32) (param $n i32)
    (param $out i32) (param $ldo i32) (param $acc i32)
    (local $r i32) (local $c i32) (local $two i32)
    (local $sa i32) (local $ldob i32)
    (local $w0 i32) (local $w1 i32) (local $ws0 f32) (local $ws1 f32) (local $b0 f32) (local $b1 f32) (local $sr f32) (local $y f32)
    (local $a0 i32) (local $a1 i32) (local $a2 i32) (local $a3 i32) (local $p0 i32) (local $p1 i32)
    (local $end i32) (local $o i32)
    (local $x v128) (local $wa v128) (local $wb v128)
    (local $c00 v128) (local $c10 v128) (local $c20 v128) (local $c30 v128)
    (local $c01 v128) (local $c11 v128) (local $c21 v128) (local $c31 v128)
    (local $t v128) (local $u v128) (local $v v128)
    (local.set $sa (i32.shl (local.get $kpad) (i32.const 1)))
    (local.set $ldob (i32.shl (local.get $ldo) (i32.const 2)))
    (local.set $c (i32.const 0))
    (block $cols_done
      (loop $col
        (br_if $cols_done (i32.ge_u (local.get $c) (local.get $n)))
        ;; the column pair (c, c + 1); an odd last column is paired with itself
        (local.set $two (i32.lt_u (i32.add (local.get $c) (i32.const 1)) (local.get $n)))
        (local.set $w0 (i32.add (local.get $w) (i32.mul (local.get $c) (local.get $kpad))))
        (local.set $w1 (select (i32.add (local.get $w0) (local.get $kpad)) (local.get $w0) (local.get $two)))
        (local.set $ws0 (f32.load (i32.add (local.get $wscales) (i32.shl (local.get $c) (i32.const 2)))))
        (local.set $ws1 (local.get $ws0))
        (if (local.get $two)
          (then (local.set $ws1 (f32.load offset=4 (i32.add (local.get $wscales) (i32.shl (local.get $c) (i32.const 2)))))))
        (local.set $b0 (f32.const 0))
        (local.set $b1 (f32.const 0))
        (if (local.get $bias)
          (then
            (local.set $b0 (f32.load (i32.add (local.get $bias) (i32.shl (local.get $c) (i32.const 2)))))
            (if (local.get $two)
              (then (local.set $b1 (f32.load offset=4 (i32.add (local.get $bias) (i32.shl (local.get $c) (i32.const 2)))))))))
        (local.set $end (i32.add (local.get $w0) (local.get $kpad)))

        ;; ---- 4 x 2 tiles ----
        (local.set $r (i32.const 0))
        (block $r4_done
          (loop $r4
            (br_if $r4_done (i32.gt_u (i32.add (local.get $r) (i32.const 4)) (local.get $rows)))
            (local.set $a0 (i32.add (local.get $q) (i32.mul (local.get $r) (local.get $sa))))
            (local.set $a1 (i32.add (local.get $a0) (local.get $sa)))
            (local.set $a2 (i32.add (local.get $a1) (local.get $sa)))
            (local.set $a3 (i32.add (local.get $a2) (local.get $sa)))
            (local.set $p0 (local.get $w0))
            (local.set $p1 (local.get $w1))
            (local.set $c00 (v128.const i32x4 0 0 0 0)) (local.set $c01 (v128.const i32x4 0 0 0 0))
            (local.set $c10 (v128.const i32x4 0 0 0 0)) (local.set $c11 (v128.const i32x4 0 0 0 0))
            (local.set $c20 (v128.const i32x4 0 0 0 0)) (local.set $c21 (v128.const i32x4 0 0 0 0))
            (local.set $c30 (v128.const i32x4 0 0 0 0)) (local.set $c31 (v128.const i32x4 0 0 0 0))
            (if (local.get $kpad)
              (then
                ;; 8 k per iteration (see the register budget above: a 16-k body spills)
                (loop $k
                  (local.set $wa (v128.load8x8_s (local.get $p0)))
                  (local.set $wb (v128.load8x8_s (local.get $p1)))
                  (local.set $x (v128.load (local.get $a0)))
                  (local.set $c00 (i32x4.add (local.get $c00) (i32x4.dot_i16x8_s (local.get $x) (local.get $wa))))
                  (local.set $c01 (i32x4.add (local.get $c01) (i32x4.dot_i16x8_s (local.get $x) (local.get $wb))))
                  (local.set $x (v128.load (local.get $a1)))
                  (local.set $c10 (i32x4.add (local.get $c10) (i32x4.dot_i16x8_s (local.get $x) (local.get $wa))))
                  (local.set $c11 (i32x4.add (local.get $c11) (i32x4.dot_i16x8_s (local.get $x) (local.get $wb))))
                  (local.set $x (v128.load (local.get $a2)))
                  (local.set $c20 (i32x4.add (local.get $c20) (i32x4.dot_i16x8_s (local.get $x) (local.get $wa))))
                  (local.set $c21 (i32x4.add (local.get $c21) (i32x4.dot_i16x8_s (local.get $x) (local.get $wb))))
                  (local.set $x (v128.load (local.get $a3)))
                  (local.set $c30 (i32x4.add (local.get $c30) (i32x4.dot_i16x8_s (local.get $x) (local.get $wa))))
                  (local.set $c31 (i32x4.add (local.get $c31) (i32x4.dot_i16x8_s (local.get $x) (local.get $wb))))
                  (local.set $a0 (i32.add (local.get $a0) (i32.const 16)))
                  (local.set $a1 (i32.add (local.get $a1) (i32.const 16)))
                  (local.set $a2 (i32.add (local.get $a2) (i32.const 16)))
                  (local.set $a3 (i32.add (local.get $a3) (i32.const 16)))
                  (local.set $p1 (i32.add (local.get $p1) (i32.const 8)))
                  (local.set $p0 (i32.add (local.get $p0) (i32.const 8)))
                  (br_if $k (i32.lt_u (local.get $p0) (local.get $end))))))

            ;; epilogue: transpose-add the four rows' accumulators of a column into one
            ;; i32x4 [sum r, sum r+1, sum r+2, sum r+3], scale in f32, add to out's 4 values
            ;; when accumulating, store 4 scalars
            (local.set $o (i32.add (local.get $out)
              (i32.shl (i32.add (i32.mul (local.get $r) (local.get $ldo)) (local.get $c)) (i32.const 2))))
            (local.set $u (v128.load (i32.add (local.get $scales) (i32.shl (local.get $r) (i32.const 2)))))
            ;; column c
            (local.set $t (i32x4.add
              (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $c00) (local.get $c10))
              (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $c00) (local.get $c10))))
            (local.set $v (i32x4.add
              (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $c20) (local.get $c30))
              (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $c20) (local.get $c30))))
            (local.set $t (i32x4.add
              (i8x16.shuffle 0 1 2 3 8 9 10 11 16 17 18 19 24 25 26 27 (local.get $t) (local.get $v))
              (i8x16.shuffle 4 5 6 7 12 13 14 15 20 21 22 23 28 29 30 31 (local.get $t) (local.get $v))))
            (local.set $t (f32x4.add
              (f32x4.mul (f32x4.mul (f32x4.convert_i32x4_s (local.get $t)) (local.get $u)) (f32x4.splat (local.get $ws0)))
              (f32x4.splat (local.get $b0))))
            (if (local.get $acc)
              (then
                ;; out + t for the column's 4 rows (inlined: a call here measured 5-7 % slower, the
                ;; caller-saved xmm registers spilled around it)
                (local.set $t (f32x4.add
                  (f32x4.replace_lane 3
                    (f32x4.replace_lane 2
                      (f32x4.replace_lane 1
                        (f32x4.splat (f32.load (local.get $o)))
                        (f32.load (i32.add (local.get $o) (local.get $ldob))))
                      (f32.load (i32.add (local.get $o) (i32.shl (local.get $ldob) (i32.const 1)))))
                    (f32.load (i32.add (local.get $o) (i32.mul (local.get $ldob) (i32.const 3)))))
                  (local.get $t)))))
            (f32.store (local.get $o) (f32x4.extract_lane 0 (local.get $t)))
            (f32.store (i32.add (local.get $o) (local.get $ldob)) (f32x4.extract_lane 1 (local.get $t)))
            (f32.store (i32.add (local.get $o) (i32.shl (local.get $ldob) (i32.const 1))) (f32x4.extract_lane 2 (local.get $t)))
            (f32.store (i32.add (local.get $o) (i32.mul (local.get $ldob) (i32.const 3))) (f32x4.extract_lane 3 (local.get $t)))
            ;; column c + 1
            (if (local.get $two)
              (then
                (local.set $t (i32x4.add
                  (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $c01) (local.get $c11))
                  (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $c01) (local.get $c11))))
                (local.set $v (i32x4.add
                  (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $c21) (local.get $c31))
                  (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $c21) (local.get $c31))))
                (local.set $t (i32x4.add
                  (i8x16.shuffle 0 1 2 3 8 9 10 11 16 17 18 19 24 25 26 27 (local.get $t) (local.get $v))
                  (i8x16.shuffle 4 5 6 7 12 13 14 15 20 21 22 23 28 29 30 31 (local.get $t) (local.get $v))))
                (local.set $t (f32x4.add
                  (f32x4.mul (f32x4.mul (f32x4.convert_i32x4_s (local.get $t)) (local.get $u)) (f32x4.splat (local.get $ws1)))
                  (f32x4.splat (local.get $b1))))
                (local.set $o (i32.add (local.get $o) (i32.const 4)))
                (if (local.get $acc)
                  (then
                    (local.set $t (f32x4.add
                      (f32x4.replace_lane 3
                        (f32x4.replace_lane 2
                          (f32x4.replace_lane 1
                            (f32x4.splat (f32.load (local.get $o)))
                            (f32.load (i32.add (local.get $o) (local.get $ldob))))
                          (f32.load (i32.add (local.get $o) (i32.shl (local.get $ldob) (i32.const 1)))))
                        (f32.load (i32.add (local.get $o) (i32.mul (local.get $ldob) (i32.const 3)))))
                      (local.get $t)))))
                (f32.store (local.get $o) (f32x4.extract_lane 0 (local.get $t)))
                (f32.store (i32.add (local.get $o) (local.get $ldob)) (f32x4.extract_lane 1 (local.get $t)))
                (f32.store (i32.add (local.get $o) (i32.shl (local.get $ldob) (i32.const 1))) (f32x4.extract_lane 2 (local.get $t)))
                (f32.store (i32.add (local.get $o) (i32.mul (local.get $ldob) (i32.const 3))) (f32x4.extract_lane 3 (local.get $t)))))
            (local.set $r (i32.add (local.get $r) (i32.const 4)))
            (br $r4)))

        ;; ---- 1 x 2 tiles for the last rows % 4 rows ----
        (block $r1_done
          (loop $r1
            (br_if $r1_done (i32.ge_u (local.get $r) (local.get $rows)))
            (local.set $a0 (i32.add (local.get $q) (i32.mul (local.get $r) (local.get $sa))))
            (local.set $p0 (local.get $w0))
            (local.set $p1 (local.get $w1))
            (local.set $c00 (v128.const i32x4 0 0 0 0))
            (local.set $c01 (v128.const i32x4 0 0 0 0))
            (if (local.get $kpad)
              (then
                (loop $k1
                  (local.set $x (v128.load (local.get $a0)))
                  (local.set $c00 (i32x4.add (local.get $c00) (i32x4.dot_i16x8_s (local.get $x) (v128.load8x8_s (local.get $p0)))))
                  (local.set $c01 (i32x4.add (local.get $c01) (i32x4.dot_i16x8_s (local.get $x) (v128.load8x8_s (local.get $p1)))))
                  (local.set $x (v128.load offset=16 (local.get $a0)))
                  (local.set $c00 (i32x4.add (local.get $c00) (i32x4.dot_i16x8_s (local.get $x) (v128.load8x8_s offset=8 (local.get $p0)))))
                  (local.set $c01 (i32x4.add (local.get $c01) (i32x4.dot_i16x8_s (local.get $x) (v128.load8x8_s offset=8 (local.get $p1)))))
                  (local.set $a0 (i32.add (local.get $a0) (i32.const 32)))
                  (local.set $p1 (i32.add (local.get $p1) (i32.const 16)))
                  (local.set $p0 (i32.add (local.get $p0) (i32.const 16)))
                  (br_if $k1 (i32.lt_u (local.get $p0) (local.get $end))))))
            ;; [c00 lanes 0+2, 1+3, c01 lanes 0+2, 1+3], then pairwise: lane 0 = column c, lane 2 = c + 1
            (local.set $t (i32x4.add
              (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $c00) (local.get $c01))
              (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $c00) (local.get $c01))))
            (local.set $t (i32x4.add (local.get $t)
              (i8x16.shuffle 4 5 6 7 0 1 2 3 12 13 14 15 8 9 10 11 (local.get $t) (local.get $t))))
            (local.set $o (i32.add (local.get $out)
              (i32.shl (i32.add (i32.mul (local.get $r) (local.get $ldo)) (local.get $c)) (i32.const 2))))
            (local.set $sr (f32.load (i32.add (local.get $scales) (i32.shl (local.get $r) (i32.const 2)))))
            (local.set $y
              (f32.add
                (f32.mul (f32.mul (f32.convert_i32_s (i32x4.extract_lane 0 (local.get $t))) (local.get $sr)) (local.get $ws0))
                (local.get $b0)))
            (if (local.get $acc) (then (local.set $y (f32.add (f32.load (local.get $o)) (local.get $y)))))
            (f32.store (local.get $o) (local.get $y))
            (if (local.get $two)
              (then
                (local.set $y
                  (f32.add
                    (f32.mul (f32.mul (f32.convert_i32_s (i32x4.extract_lane 2 (local.get $t))) (local.get $sr)) (local.get $ws1))
                    (local.get $b1)))
                (if (local.get $acc) (then (local.set $y (f32.add (f32.load offset=4 (local.get $o)) (local.get $y)))))
                (f32.store offset=4 (local.get $o) (local.get $y))))
            (local.set $r (i32.add (local.get $r) (i32.const 1)))
            (br $r1)))

        (local.set $c (i32.add (local.get $c) (i32.const 2)))
        (br $col))))

  ;; ---------------------------------------------------------------------------------------
  ;; matmul_f32: out[r, c] = alpha * sum_j a[r * lda + j] * b[c * ldb + j]   (b transposed)
  ;;
  ;; For attention: q . k^T (a = queries, b = keys) with k = head size (32 or 64), rows and
  ;; n up to 128 tokens; lda/ldb/ldo address one head's slice inside a wider matrix, so
  ;; loads are unaligned in general (v128.load allows that).
  ;; Tile: 4 rows x 2 columns, 8 f32x4 accumulators, 4 k per loop iteration (4 + 2 loads,
  ;; 8 mul, 8 add: each b vector used 4 times, each a vector twice). Live vectors
  ;; 8 + 2 + 4 = 14, the same budget as qmatmul (TurboFan's code for it has no spills);
  ;; same transpose-add epilogue. A k that is not a multiple of 4 ends with one
  ;; overlapping vector step at k - 4 whose already-summed lanes are masked to zero, so
  ;; there is no scalar tail inside the tile; k < 4 takes a plain scalar loop.
  ;; Remainders: odd last column paired with itself, last rows % 4 rows as 1 x 2 tiles.
  ;; ---------------------------------------------------------------------------------------
  (func (export "matmul_f32")
    (param $a i32) (param $lda i32) (param $rows i32) (param $k i32)
    (param $b i32) (param $ldb i32) (param $n i32)
    (param $out i32) (param $ldo i32) (param $alpha f32)
    (local $r i32) (local $c i32) (local $two i32) (local $j i32)
    (local $sa i32) (local $ldob i32) (local $kb i32) (local $tail i32) (local $mask v128) (local $valpha v128)
    (local $b0 i32) (local $b1 i32) (local $a0 i32) (local $a1 i32) (local $a2 i32) (local $a3 i32)
    (local $p0 i32) (local $p1 i32) (local $o i32) (local $acc f32)
    (local $x v128) (local $wa v128) (local $wb v128)
    (local $c00 v128) (local $c10 v128) (local $c20 v128) (local $c30 v128)
    (local $c01 v128) (local $c11 v128) (local $c21 v128) (local $c31 v128)
    (local $t v128) (local $v v128)

    ;; k < 4: no full vector; plain dot products
    (if (i32.lt_s (local.get $k) (i32.const 4))
      (then
        (block $sr_done
          (loop $sr
            (br_if $sr_done (i32.ge_u (local.get $r) (local.get $rows)))
            (local.set $c (i32.const 0))
            (block $sc_done
              (loop $sc
                (br_if $sc_done (i32.ge_u (local.get $c) (local.get $n)))
                (local.set $acc (f32.const 0))
                (local.set $j (i32.const 0))
                (block $sj_done
                  (loop $sj
                    (br_if $sj_done (i32.ge_s (local.get $j) (local.get $k)))
                    (local.set $acc (f32.add (local.get $acc)
                      (f32.mul
                        (f32.load (i32.add (i32.shl (i32.add (i32.mul (local.get $r) (local.get $lda)) (local.get $j)) (i32.const 2)) (local.get $a)))
                        (f32.load (i32.add (i32.shl (i32.add (i32.mul (local.get $c) (local.get $ldb)) (local.get $j)) (i32.const 2)) (local.get $b))))))
                    (local.set $j (i32.add (local.get $j) (i32.const 1)))
                    (br $sj)))
                (f32.store (i32.add (local.get $out) (i32.shl (i32.add (i32.mul (local.get $r) (local.get $ldo)) (local.get $c)) (i32.const 2)))
                  (f32.mul (local.get $alpha) (local.get $acc)))
                (local.set $c (i32.add (local.get $c) (i32.const 1)))
                (br $sc)))
            (local.set $r (i32.add (local.get $r) (i32.const 1)))
            (br $sr)))
        (return)))

    (local.set $sa (i32.shl (local.get $lda) (i32.const 2)))
    (local.set $ldob (i32.shl (local.get $ldo) (i32.const 2)))
    (local.set $valpha (f32x4.splat (local.get $alpha)))
    ;; main steps cover k & ~3 floats (kb bytes); the tail step reads floats k-4 .. k-1 and
    ;; keeps lanes i >= 4 - (k & 3), i.e. i > 3 - (k & 3)
    (local.set $kb (i32.shl (i32.and (local.get $k) (i32.const -4)) (i32.const 2)))
    (local.set $tail (i32.and (local.get $k) (i32.const 3)))
    (local.set $mask (i32x4.gt_s (v128.const i32x4 0 1 2 3) (i32x4.splat (i32.sub (i32.const 3) (local.get $tail)))))

    (block $cols_done
      (loop $col
        (br_if $cols_done (i32.ge_u (local.get $c) (local.get $n)))
        (local.set $two (i32.lt_u (i32.add (local.get $c) (i32.const 1)) (local.get $n)))
        (local.set $b0 (i32.add (local.get $b) (i32.shl (i32.mul (local.get $c) (local.get $ldb)) (i32.const 2))))
        (local.set $b1 (select (i32.add (local.get $b0) (i32.shl (local.get $ldb) (i32.const 2))) (local.get $b0) (local.get $two)))

        ;; ---- 4 x 2 tiles ----
        (local.set $r (i32.const 0))
        (block $r4_done
          (loop $r4
            (br_if $r4_done (i32.gt_u (i32.add (local.get $r) (i32.const 4)) (local.get $rows)))
            (local.set $a0 (i32.add (local.get $a) (i32.mul (local.get $r) (local.get $sa))))
            (local.set $a1 (i32.add (local.get $a0) (local.get $sa)))
            (local.set $a2 (i32.add (local.get $a1) (local.get $sa)))
            (local.set $a3 (i32.add (local.get $a2) (local.get $sa)))
            (local.set $c00 (v128.const i32x4 0 0 0 0)) (local.set $c01 (v128.const i32x4 0 0 0 0))
            (local.set $c10 (v128.const i32x4 0 0 0 0)) (local.set $c11 (v128.const i32x4 0 0 0 0))
            (local.set $c20 (v128.const i32x4 0 0 0 0)) (local.set $c21 (v128.const i32x4 0 0 0 0))
            (local.set $c30 (v128.const i32x4 0 0 0 0)) (local.set $c31 (v128.const i32x4 0 0 0 0))
            ;; $j: byte offset along k (the same for a and b rows); k >= 4 so at least one step
            (local.set $j (i32.const 0))
            (loop $k4
              (local.set $wa (v128.load (i32.add (local.get $b0) (local.get $j))))
              (local.set $wb (v128.load (i32.add (local.get $b1) (local.get $j))))
              (local.set $x (v128.load (i32.add (local.get $a0) (local.get $j))))
              (local.set $c00 (f32x4.add (local.get $c00) (f32x4.mul (local.get $x) (local.get $wa))))
              (local.set $c01 (f32x4.add (local.get $c01) (f32x4.mul (local.get $x) (local.get $wb))))
              (local.set $x (v128.load (i32.add (local.get $a1) (local.get $j))))
              (local.set $c10 (f32x4.add (local.get $c10) (f32x4.mul (local.get $x) (local.get $wa))))
              (local.set $c11 (f32x4.add (local.get $c11) (f32x4.mul (local.get $x) (local.get $wb))))
              (local.set $x (v128.load (i32.add (local.get $a2) (local.get $j))))
              (local.set $c20 (f32x4.add (local.get $c20) (f32x4.mul (local.get $x) (local.get $wa))))
              (local.set $c21 (f32x4.add (local.get $c21) (f32x4.mul (local.get $x) (local.get $wb))))
              (local.set $x (v128.load (i32.add (local.get $a3) (local.get $j))))
              (local.set $c30 (f32x4.add (local.get $c30) (f32x4.mul (local.get $x) (local.get $wa))))
              (local.set $c31 (f32x4.add (local.get $c31) (f32x4.mul (local.get $x) (local.get $wb))))
              (local.set $j (i32.add (local.get $j) (i32.const 16)))
              (br_if $k4 (i32.lt_u (local.get $j) (local.get $kb))))
            (if (local.get $tail)
              (then
                ;; overlapping step at float k - 4 (byte kb + 4 * tail - 16); both operands are
                ;; masked so an inf or NaN in an already-summed lane cannot leak in as 0 * inf
                (local.set $j (i32.sub (i32.add (local.get $kb) (i32.shl (local.get $tail) (i32.const 2))) (i32.const 16)))
                (local.set $wa (v128.and (local.get $mask) (v128.load (i32.add (local.get $b0) (local.get $j)))))
                (local.set $wb (v128.and (local.get $mask) (v128.load (i32.add (local.get $b1) (local.get $j)))))
                (local.set $x (v128.and (local.get $mask) (v128.load (i32.add (local.get $a0) (local.get $j)))))
                (local.set $c00 (f32x4.add (local.get $c00) (f32x4.mul (local.get $x) (local.get $wa))))
                (local.set $c01 (f32x4.add (local.get $c01) (f32x4.mul (local.get $x) (local.get $wb))))
                (local.set $x (v128.and (local.get $mask) (v128.load (i32.add (local.get $a1) (local.get $j)))))
                (local.set $c10 (f32x4.add (local.get $c10) (f32x4.mul (local.get $x) (local.get $wa))))
                (local.set $c11 (f32x4.add (local.get $c11) (f32x4.mul (local.get $x) (local.get $wb))))
                (local.set $x (v128.and (local.get $mask) (v128.load (i32.add (local.get $a2) (local.get $j)))))
                (local.set $c20 (f32x4.add (local.get $c20) (f32x4.mul (local.get $x) (local.get $wa))))
                (local.set $c21 (f32x4.add (local.get $c21) (f32x4.mul (local.get $x) (local.get $wb))))
                (local.set $x (v128.and (local.get $mask) (v128.load (i32.add (local.get $a3) (local.get $j)))))
                (local.set $c30 (f32x4.add (local.get $c30) (f32x4.mul (local.get $x) (local.get $wa))))
                (local.set $c31 (f32x4.add (local.get $c31) (f32x4.mul (local.get $x) (local.get $wb))))))

            (local.set $o (i32.add (local.get $out)
              (i32.shl (i32.add (i32.mul (local.get $r) (local.get $ldo)) (local.get $c)) (i32.const 2))))
            ;; column c: transpose-add to [sum r .. sum r+3]
            (local.set $t (f32x4.add
              (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $c00) (local.get $c10))
              (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $c00) (local.get $c10))))
            (local.set $v (f32x4.add
              (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $c20) (local.get $c30))
              (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $c20) (local.get $c30))))
            (local.set $t (f32x4.mul (local.get $valpha) (f32x4.add
              (i8x16.shuffle 0 1 2 3 8 9 10 11 16 17 18 19 24 25 26 27 (local.get $t) (local.get $v))
              (i8x16.shuffle 4 5 6 7 12 13 14 15 20 21 22 23 28 29 30 31 (local.get $t) (local.get $v)))))
            (f32.store (local.get $o) (f32x4.extract_lane 0 (local.get $t)))
            (f32.store (i32.add (local.get $o) (local.get $ldob)) (f32x4.extract_lane 1 (local.get $t)))
            (f32.store (i32.add (local.get $o) (i32.shl (local.get $ldob) (i32.const 1))) (f32x4.extract_lane 2 (local.get $t)))
            (f32.store (i32.add (local.get $o) (i32.mul (local.get $ldob) (i32.const 3))) (f32x4.extract_lane 3 (local.get $t)))
            ;; column c + 1
            (if (local.get $two)
              (then
                (local.set $t (f32x4.add
                  (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $c01) (local.get $c11))
                  (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $c01) (local.get $c11))))
                (local.set $v (f32x4.add
                  (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $c21) (local.get $c31))
                  (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $c21) (local.get $c31))))
                (local.set $t (f32x4.mul (local.get $valpha) (f32x4.add
                  (i8x16.shuffle 0 1 2 3 8 9 10 11 16 17 18 19 24 25 26 27 (local.get $t) (local.get $v))
                  (i8x16.shuffle 4 5 6 7 12 13 14 15 20 21 22 23 28 29 30 31 (local.get $t) (local.get $v)))))
                (local.set $o (i32.add (local.get $o) (i32.const 4)))
                (f32.store (local.get $o) (f32x4.extract_lane 0 (local.get $t)))
                (f32.store (i32.add (local.get $o) (local.get $ldob)) (f32x4.extract_lane 1 (local.get $t)))
                (f32.store (i32.add (local.get $o) (i32.shl (local.get $ldob) (i32.const 1))) (f32x4.extract_lane 2 (local.get $t)))
                (f32.store (i32.add (local.get $o) (i32.mul (local.get $ldob) (i32.const 3))) (f32x4.extract_lane 3 (local.get $t)))))
            (local.set $r (i32.add (local.get $r) (i32.const 4)))
            (br $r4)))

        ;; ---- 1 x 2 tiles for the last rows % 4 rows ----
        (block $r1_done
          (loop $r1
            (br_if $r1_done (i32.ge_u (local.get $r) (local.get $rows)))
            (local.set $a0 (i32.add (local.get $a) (i32.mul (local.get $r) (local.get $sa))))
            (local.set $c00 (v128.const i32x4 0 0 0 0))
            (local.set $c01 (v128.const i32x4 0 0 0 0))
            (local.set $j (i32.const 0))
            (loop $k1
              (local.set $x (v128.load (i32.add (local.get $a0) (local.get $j))))
              (local.set $c00 (f32x4.add (local.get $c00) (f32x4.mul (local.get $x) (v128.load (i32.add (local.get $b0) (local.get $j))))))
              (local.set $c01 (f32x4.add (local.get $c01) (f32x4.mul (local.get $x) (v128.load (i32.add (local.get $b1) (local.get $j))))))
              (local.set $j (i32.add (local.get $j) (i32.const 16)))
              (br_if $k1 (i32.lt_u (local.get $j) (local.get $kb))))
            (if (local.get $tail)
              (then
                (local.set $j (i32.sub (i32.add (local.get $kb) (i32.shl (local.get $tail) (i32.const 2))) (i32.const 16)))
                (local.set $x (v128.and (local.get $mask) (v128.load (i32.add (local.get $a0) (local.get $j)))))
                (local.set $c00 (f32x4.add (local.get $c00)
                  (f32x4.mul (local.get $x) (v128.and (local.get $mask) (v128.load (i32.add (local.get $b0) (local.get $j)))))))
                (local.set $c01 (f32x4.add (local.get $c01)
                  (f32x4.mul (local.get $x) (v128.and (local.get $mask) (v128.load (i32.add (local.get $b1) (local.get $j)))))))))
            ;; lane 0 = column c, lane 2 = column c + 1 (same pairing as in qmatmul)
            (local.set $t (f32x4.add
              (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $c00) (local.get $c01))
              (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $c00) (local.get $c01))))
            (local.set $t (f32x4.mul (local.get $valpha) (f32x4.add (local.get $t)
              (i8x16.shuffle 4 5 6 7 0 1 2 3 12 13 14 15 8 9 10 11 (local.get $t) (local.get $t)))))
            (local.set $o (i32.add (local.get $out)
              (i32.shl (i32.add (i32.mul (local.get $r) (local.get $ldo)) (local.get $c)) (i32.const 2))))
            (f32.store (local.get $o) (f32x4.extract_lane 0 (local.get $t)))
            (if (local.get $two) (then (f32.store offset=4 (local.get $o) (f32x4.extract_lane 2 (local.get $t)))))
            (local.set $r (i32.add (local.get $r) (i32.const 1)))
            (br $r1)))

        (local.set $c (i32.add (local.get $c) (i32.const 2)))
        (br $col))))
)
