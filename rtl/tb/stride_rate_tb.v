// Testbench for stride_rate_shift or stride_rate_muldiv (chosen by `define STRIDE_MULDIV):
// reads from +ops=FILE a first line with the configuration
//   alpha_shift beta omega_shift t_low t_high k min_rate normalizer base_stt
// then operations "op conn value", feeds them one at a time and writes one line per operation
// to +out=FILE in the trace's column order, then the clocks it took.
`timescale 1ns/1ps
module stride_rate_tb;
    parameter W = 64;
    parameter CONNS = 64;
    localparam CONN_W = CONNS > 1 ? $clog2(CONNS) : 1;

    reg clk = 0, rst = 1, in_valid = 0, in_op = 0;
    reg [CONN_W-1:0] in_conn = 0;
    reg signed [W-1:0] in_value = 0;
    reg [4:0] alpha_shift, omega_shift, k;
    reg [W-1:0] beta, t_low, t_high, min_rate, base_stt;
    reg normalizer;
    wire in_ready, out_valid;
    wire signed [W-1:0] out_rate, out_delta_stt, out_stt_min;
    wire [2:0] out_branch;
    wire [6:0] out_gradient;

`ifdef STRIDE_MULDIV
    stride_rate_muldiv #(.W(W), .CONNS(CONNS)) dut (
        .cfg_alpha_q16(17'd65536 >> alpha_shift), .cfg_beta(beta), .cfg_omega(17'd1 << omega_shift),
        .cfg_cut_q16(17'd65536 >> k),
`else
    stride_rate_shift #(.W(W), .CONNS(CONNS)) dut (
        .cfg_alpha_shift(alpha_shift), .cfg_beta(beta), .cfg_omega_shift(omega_shift), .cfg_k(k),
`endif
        .clk(clk), .rst(rst), .cfg_t_low(t_low), .cfg_t_high(t_high), .cfg_min_rate(min_rate),
        .cfg_configured_normalizer(normalizer), .cfg_base_stt(base_stt),
        .in_valid(in_valid), .in_ready(in_ready), .in_op(in_op), .in_conn(in_conn),
        .in_value(in_value), .out_valid(out_valid), .out_rate(out_rate),
        .out_delta_stt(out_delta_stt), .out_stt_min(out_stt_min), .out_branch(out_branch),
        .out_gradient(out_gradient));

    always #1 clk = ~clk;

    integer fin, fout, n, op, conn, cycles, a, o, kk, nm;
    reg signed [W-1:0] value;
    reg [8*256-1:0] ops_file, out_file;
    initial begin
        if (!$value$plusargs("ops=%s", ops_file) || !$value$plusargs("out=%s", out_file)) begin
            $display("usage: +ops=FILE +out=FILE"); $finish;
        end
        fin = $fopen(ops_file, "r");
        fout = $fopen(out_file, "w");
        n = $fscanf(fin, "%d %d %d %d %d %d %d %d %d\n", a, beta, o, t_low, t_high, kk, min_rate, nm, base_stt);
        alpha_shift = a; omega_shift = o; k = kk; normalizer = nm;
        repeat (2) @(negedge clk);
        rst = 0;
        while (!$feof(fin)) begin
            n = $fscanf(fin, "%d %d %d\n", op, conn, value);
            if (n == 3) begin
                // As in melo_rx_bitmap_tb.v: drive and read at falling edges.
                while (!in_ready) @(negedge clk);
                in_op = op; in_conn = conn; in_value = value; in_valid = 1;
                @(negedge clk);
                in_valid = 0;
                cycles = 1;
                while (!out_valid) begin @(negedge clk); cycles = cycles + 1; end
                $fwrite(fout, "%0d %0d %0d %0d %0d %0d %0d %0d %0d\n", op, conn, value, $unsigned(out_rate),
                        out_delta_stt, out_stt_min, out_branch, out_gradient, cycles);
            end
        end
        $fclose(fout);
        $finish;
    end
endmodule
