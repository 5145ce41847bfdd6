// STRIDE's rate calculator (Fu et al., "STRIDE: Single-Trip-time based Reliable Data Transport
// Protocol for the Reconfigurable Cloud", Algorithm 1 and eq. (1)-(2)), in shifts, additions,
// subtractions and comparisons only: no multiplier, no divider.
//
// Must match, sample for sample, retx's model StrideCc::on_stt
// (crates/retx/src/transport/stride_cc.rs, with decrease = "shift"), as traced by
// `retx trace stride` (crates/retx/src/observe/hw_trace.rs) and checked by
// tests/python/test_rtl_cosim.py. stride_rate_muldiv.v is the same update with multipliers
// and a divider, for comparison.
//
// Per connection (CONNS entries): rate, line rate, floor, STT_min, STT_old, dSTT (all W bits;
// STTs and dSTT signed, in the trace's picoseconds; rates in bit/s). One update per STT sample:
//   STT_min <- min(STT_min, STT)                              (line 2; the first sample sets it)
//   dSTT <- dSTT - (dSTT >>> a) + ((STT - STT_old) >>> a)     (line 4, alpha = 2^-a; not on the
//                                                              first sample; saturated to W bits)
//   q = STT - STT_min;  q < T_low: r += beta;  q >= T_high: r -= r >> k (eq. 1)
//   T_low < q < T_high: g = repeated subtraction of the normaliser from dSTT (eq. 2, lines
//   13-18, at most MAX_GRADIENT rounds); g = 0: r += beta << w; g > 0: eq. (1) applied g times
//   r stays within [floor, line]; q = T_low exactly changes nothing (as printed).
// in_op 0 opens (resets) a connection with its line rate in in_value; in_op 1 is an STT sample.
//
// Timing: one operation at a time (in_ready low while busy). An open or a threshold branch
// holds the unit 2 clocks (accepting edge, then the edge that registers the outputs); in the
// gradient region 1 clock per subtraction round plus 1 for the loop's exit, and 1 per eq. (1)
// round of a decrease: 3 clocks for an increase, 3 + 2g for a decrease by gradient g. The
// paper counts each shift as one clock; so does this design.
//
// `define STRIDE_BUG_SHIFT plants a bug for the co-simulation's self-test: eq. (1) shifts by
// k - 1.

module stride_rate_shift #(
    parameter W            = 64,   // STT, dSTT and rate registers (retx's model: 64-bit)
    parameter CONNS        = 64,
    parameter MAX_GRADIENT = 64    // bound on the loop of lines 15-18 (stride_cc.rs MAX_GRADIENT)
) (
    input  wire                 clk,
    input  wire                 rst,
    // Configuration (stride_cc.rs StrideCcParams; TIMELY's 10 Gb/s values by default there).
    input  wire [4:0]           cfg_alpha_shift,
    input  wire [W-1:0]         cfg_beta,
    input  wire [4:0]           cfg_omega_shift,
    input  wire [W-1:0]         cfg_t_low,
    input  wire [W-1:0]         cfg_t_high,
    input  wire [4:0]           cfg_k,
    input  wire [W-1:0]         cfg_min_rate,
    input  wire                 cfg_configured_normalizer,  // 0: STT_min (paper), 1: base_stt
    input  wire [W-1:0]         cfg_base_stt,
    input  wire                 in_valid,
    output wire                 in_ready,
    input  wire                 in_op,
    input  wire [CONN_W-1:0]    in_conn,
    input  wire [W-1:0]         in_value,
    output reg                  out_valid,
    output reg  [W-1:0]         out_rate,
    output reg  [W-1:0]         out_delta_stt,
    output reg  [W-1:0]         out_stt_min,
    output reg  [2:0]           out_branch,    // 0 <T_low, 1 >=T_high, 2 g=0, 3 g>0, 4 =T_low, 7 open
    output reg  [6:0]           out_gradient
);
    localparam CONN_W = CONNS > 1 ? $clog2(CONNS) : 1;
    localparam LW = W + 9;   // the loop's remainder: grows by up to MAX_GRADIENT normalisers
    localparam S_IDLE = 2'd0, S_EXEC = 2'd1, S_LOOP = 2'd2, S_CUT = 2'd3;
    localparam B_LOW = 3'd0, B_HIGH = 3'd1, B_INC = 3'd2, B_DEC = 3'd3, B_AT_LOW = 3'd4, B_OPEN = 3'd7;

    reg [W-1:0] rate_mem [0:CONNS-1];
    reg [W-1:0] line_mem [0:CONNS-1];
    reg [W-1:0] floor_mem [0:CONNS-1];
    reg [W-1:0] min_mem [0:CONNS-1];
    reg [W-1:0] old_mem [0:CONNS-1];
    reg [W-1:0] delta_mem [0:CONNS-1];
    reg         has_min_mem [0:CONNS-1];

    reg [1:0] state;
    reg op;
    reg [CONN_W-1:0] c;
    reg signed [W-1:0] stt, stt_min, stt_old, delta;
    reg [W-1:0] rate, line, floor;
    reg has_min;
    // Gradient loop and decrease rounds.
    reg signed [LW-1:0] rem, norm;
    reg [6:0] g, rounds;
    reg [W-1:0] r;

    assign in_ready = state == S_IDLE;

    // ---- line 2, line 4 and the branch tests, from the loaded state ----
    wire first = !has_min;
    wire signed [W-1:0] min_next = first || stt < stt_min ? stt : stt_min;
    wire signed [W+1:0] diff = stt - stt_old;   // (W+2-bit: the difference of two W-bit values)
    wire signed [W+1:0] ewma = delta - (delta >>> cfg_alpha_shift) + (diff >>> cfg_alpha_shift);
    wire signed [W+1:0] dmax = {3'b000, {(W-1){1'b1}}};
    wire signed [W+1:0] dmin = {3'b111, {(W-1){1'b0}}};
    wire signed [W-1:0] delta_next = first ? delta : ewma > dmax ? dmax[W-1:0] : ewma < dmin ? dmin[W-1:0] : ewma[W-1:0];
    wire [W:0] q = stt - min_next;              // never negative: STT_min includes this sample
    wire below_low  = q < {1'b0, cfg_t_low};
    wire above_high = q >= {1'b0, cfg_t_high};
    wire above_low  = q > {1'b0, cfg_t_low};

    // r + step held at the line rate; eq. (1); the floor.
    function [W-1:0] increased;
        input [W-1:0] r0, l0;
        input [W+16:0] step;
        reg [W+17:0] sum;
        begin sum = r0 + step; increased = sum > l0 ? l0 : sum[W-1:0]; end
    endfunction
    function [W-1:0] eq1;
        input [W-1:0] r0;
        input [4:0] k;
`ifdef STRIDE_BUG_SHIFT
        eq1 = r0 - (r0 >> (k - 1'b1));
`else
        eq1 = r0 - (r0 >> k);
`endif
    endfunction
    function [W-1:0] at_least;
        input [W-1:0] x, f;
        at_least = x < f ? f : x;
    endfunction

    wire [W+16:0] omega_beta = {17'b0, cfg_beta} << cfg_omega_shift;
    wire signed [LW-1:0] norm_next = cfg_configured_normalizer ? {{(LW-W){1'b0}}, cfg_base_stt}
                                                                : {{(LW-W){min_next[W-1]}}, min_next};
    wire signed [LW-1:0] delta_wide = {{(LW-W){delta_next[W-1]}}, delta_next};
    wire [W-1:0] r_cut = eq1(r, cfg_k);

    task finish;
        input [W-1:0] f_rate;
        input [2:0] branch;
        input [6:0] grad;
        begin
            out_valid <= 1'b1;
            out_rate <= f_rate;
            out_delta_stt <= op ? delta_next : {W{1'b0}};
            out_stt_min <= op ? min_next : {W{1'b0}};
            out_branch <= branch;
            out_gradient <= grad;
            rate_mem[c] <= f_rate;
            state <= S_IDLE;
        end
    endtask

    always @(posedge clk) begin
        out_valid <= 1'b0;
        if (rst) state <= S_IDLE;
        else case (state)
        S_IDLE: if (in_valid) begin
            op <= in_op;
            c <= in_conn;
            stt <= in_value;
            rate <= rate_mem[in_conn];
            line <= line_mem[in_conn];
            floor <= floor_mem[in_conn];
            stt_min <= min_mem[in_conn];
            stt_old <= old_mem[in_conn];
            delta <= delta_mem[in_conn];
            has_min <= has_min_mem[in_conn];
            state <= S_EXEC;
        end
        S_EXEC: if (!op) begin
            // Open: the line rate (in the value register), no sample yet.
            line_mem[c] <= stt;
            floor_mem[c] <= cfg_min_rate < stt ? cfg_min_rate : stt;
            has_min_mem[c] <= 1'b0;
            old_mem[c] <= {W{1'b0}};
            delta_mem[c] <= {W{1'b0}};
            min_mem[c] <= {W{1'b0}};
            finish(stt, B_OPEN, 7'd0);
        end else begin
            min_mem[c] <= min_next;
            has_min_mem[c] <= 1'b1;
            old_mem[c] <= stt;
            delta_mem[c] <= delta_next;
            if (below_low)
                finish(increased(rate, line, {17'b0, cfg_beta}), B_LOW, 7'd0);
            else if (above_high)
                finish(at_least(eq1(rate, cfg_k), floor), B_HIGH, 7'd0);
            else if (above_low) begin
                rem <= delta_wide;
                norm <= norm_next;
                g <= 7'd0;
                state <= S_LOOP;
            end else
                finish(rate, B_AT_LOW, 7'd0);
        end
        S_LOOP: begin
            // Eq. (2) by repeated subtraction: one round per clock.
            if (g < MAX_GRADIENT && rem > norm) begin
                g <= g + 1'b1;
                rem <= rem - norm;
            end else if (g == 0)
                finish(increased(rate, line, omega_beta), B_INC, 7'd0);
            else begin
                r <= rate;
                rounds <= g;
                state <= S_CUT;
            end
        end
        S_CUT: begin
            // Eq. (1) once per unit of gradient, one round per clock.
            r <= r_cut;
            rounds <= rounds - 1'b1;
            if (rounds == 1) finish(at_least(r_cut, floor), B_DEC, g);
        end
        endcase
    end
endmodule
