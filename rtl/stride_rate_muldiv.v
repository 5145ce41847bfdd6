// STRIDE's rate update (Algorithm 1) written as a TIMELY-style design would compute it: the EWMA
// weight, eq. (1)'s factor and omega as multiplier operands in fixed point, and the normalised
// gradient (eq. 2) by a divider. It exists to be compared with stride_rate_shift.v, which is
// the same update in shifts, additions and subtractions (the paper's Lesson 1 and Table 1).
//
// Must match retx's model StrideCc::on_stt (crates/retx/src/transport/stride_cc.rs,
// decrease = "shift") exactly, like stride_rate_shift.v: the fixed-point forms are chosen so
// that each product rounds as the model's shift does (checked by tests/python/test_rtl_cosim.py):
//   (1 - alpha) dSTT = ceil(dSTT (2^16 - A) / 2^16)   alpha = A / 2^16 (A = 2^16 >> alpha_shift)
//   alpha diff       = floor(diff A / 2^16)
//   eq. (1)          r <- ceil(r (2^16 - C) / 2^16)   C = 2^16 >> k  (= r - floor(r / 2^k))
//   omega beta       = beta x omega
//   g = 0 if dSTT <= N; MAX_GRADIENT if N <= 0; else min((dSTT - 1) / N, MAX_GRADIENT)
//     (what the loop of lines 15-18 counts), N the normaliser.
// A positive gradient still applies eq. (1) g times, one multiplication per clock, because
// that is the model's decrease; a TIMELY-like r (1 - g beta) in one product would round
// differently and diverge.
//
// Timing: one operation at a time; 2 clocks (accepting edge, then the edge that registers the
// outputs) for everything but a decrease, which takes g more. The divider is combinational:
// one clock, through a long path (an iterative divider would take W clocks instead).

module stride_rate_muldiv #(
    parameter W            = 64,
    parameter CONNS        = 64,
    parameter MAX_GRADIENT = 64
) (
    input  wire                 clk,
    input  wire                 rst,
    input  wire [16:0]          cfg_alpha_q16,   // alpha in units of 2^-16
    input  wire [W-1:0]         cfg_beta,
    input  wire [16:0]          cfg_omega,
    input  wire [W-1:0]         cfg_t_low,
    input  wire [W-1:0]         cfg_t_high,
    input  wire [16:0]          cfg_cut_q16,     // eq. (1)'s 2^-k in units of 2^-16
    input  wire [W-1:0]         cfg_min_rate,
    input  wire                 cfg_configured_normalizer,
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
    output reg  [2:0]           out_branch,
    output reg  [6:0]           out_gradient
);
    localparam CONN_W = CONNS > 1 ? $clog2(CONNS) : 1;
    localparam S_IDLE = 2'd0, S_EXEC = 2'd1, S_CUT = 2'd2;
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
    reg [W-1:0] rate, line, floor, r;
    reg has_min;
    reg [6:0] g, rounds;

    assign in_ready = state == S_IDLE;

    wire first = !has_min;
    wire signed [W-1:0] min_next = first || stt < stt_min ? stt : stt_min;
    wire signed [W+1:0] diff = stt - stt_old;
    // Line 4 with two multiplications.
    wire signed [17:0] keep_q16 = 18'sd65536 - $signed({1'b0, cfg_alpha_q16});
    wire signed [17:0] alpha_q16 = $signed({1'b0, cfg_alpha_q16});
    wire signed [W+19:0] kept = delta * keep_q16 + 20'sd65535;
    wire signed [W+19:0] added = diff * alpha_q16;
    wire signed [W+3:0] ewma = (kept >>> 16) + (added >>> 16);
    wire signed [W+3:0] dmax = {5'b00000, {(W-1){1'b1}}};
    wire signed [W+3:0] dmin = {5'b11111, {(W-1){1'b0}}};
    wire signed [W-1:0] delta_next = first ? delta : ewma > dmax ? dmax[W-1:0] : ewma < dmin ? dmin[W-1:0] : ewma[W-1:0];
    wire [W:0] q = stt - min_next;
    wire below_low  = q < {1'b0, cfg_t_low};
    wire above_high = q >= {1'b0, cfg_t_high};
    wire above_low  = q > {1'b0, cfg_t_low};

    // Eq. (2) with a divider.
    wire signed [W+1:0] norm = cfg_configured_normalizer ? {2'b00, cfg_base_stt} : {{2{min_next[W-1]}}, min_next};
    wire signed [W+1:0] dwide = {{2{delta_next[W-1]}}, delta_next};
    // Used only when dSTT > N > 0: then dSTT - 1 and N are positive and fit W unsigned bits.
    wire [W-1:0] dividend = delta_next - 1'b1;
    wire [W-1:0] quotient = dividend / norm[W-1:0];
    wire [6:0] gradient = dwide <= norm ? 7'd0
                        : norm <= 0 || quotient >= MAX_GRADIENT ? MAX_GRADIENT[6:0] : quotient[6:0];

    // Eq. (1) by one multiplication, rounding as r - (r >> k).
    function [W-1:0] eq1;
        input [W-1:0] r0;
        reg [W+17:0] prod;
        begin
            prod = r0 * (17'd65536 - cfg_cut_q16) + 17'd65535;
            eq1 = prod[W+15:16];
        end
    endfunction
    function [W-1:0] increased;
        input [W-1:0] r0, l0;
        input [W+16:0] step;
        reg [W+17:0] sum;
        begin sum = r0 + step; increased = sum > l0 ? l0 : sum[W-1:0]; end
    endfunction
    function [W-1:0] at_least;
        input [W-1:0] x, f;
        at_least = x < f ? f : x;
    endfunction

    wire [W+16:0] omega_beta = cfg_beta * cfg_omega;
    wire [W-1:0] r_cut = eq1(r);

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
                finish(at_least(eq1(rate), floor), B_HIGH, 7'd0);
            else if (!above_low)
                finish(rate, B_AT_LOW, 7'd0);
            else if (gradient == 0)
                finish(increased(rate, line, omega_beta), B_INC, 7'd0);
            else begin
                r <= rate;
                g <= gradient;
                rounds <= gradient;
                state <= S_CUT;
            end
        end
        S_CUT: begin
            r <= r_cut;
            rounds <= rounds - 1'b1;
            if (rounds == 1) finish(at_least(r_cut, floor), B_DEC, g);
        end
        default: state <= S_IDLE;
        endcase
    end
endmodule
