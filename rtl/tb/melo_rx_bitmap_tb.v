// Testbench for melo_rx_bitmap: reads operations "conn psn" (one a line) from +ops=FILE,
// feeds them one at a time, and writes one line per operation to +out=FILE with the outputs
// in the trace's column order (start/end pointers -1 for an empty list), then the clocks the
// operation took. tests/python/test_rtl_cosim.py compares the lines with the model's.
`timescale 1ns/1ps
module melo_rx_bitmap_tb;
    parameter POOL_BLOCKS = 128;
    parameter BLOCK_BITS = 8;
    parameter CONNS = 4;
    parameter PSN_W = 24;
    parameter HOLES = 3;
    localparam PTR_W = POOL_BLOCKS > 1 ? $clog2(POOL_BLOCKS) : 1;
    localparam CNT_W = $clog2(POOL_BLOCKS + 1);
    localparam CONN_W = CONNS > 1 ? $clog2(CONNS) : 1;

    reg clk = 0, rst = 1, in_valid = 0;
    reg [CONN_W-1:0] in_conn = 0;
    reg [PSN_W-1:0] in_psn = 0;
    wire in_ready, out_valid, out_nack;
    wire [2:0] out_action;
    wire [PSN_W-1:0] out_rcv_nxt, out_rcv_high;
    wire [CNT_W-1:0] out_used_blocks, out_conn_blocks;
    wire [PTR_W-1:0] out_start_ptr, out_end_ptr;
    wire [1:0] out_holes;
    wire [6*PSN_W-1:0] out_hole_list;

    melo_rx_bitmap #(.POOL_BLOCKS(POOL_BLOCKS), .BLOCK_BITS(BLOCK_BITS), .CONNS(CONNS),
                     .PSN_W(PSN_W), .HOLES(HOLES)) dut (
        .clk(clk), .rst(rst), .in_valid(in_valid), .in_ready(in_ready), .in_conn(in_conn),
        .in_psn(in_psn), .out_valid(out_valid), .out_action(out_action), .out_nack(out_nack),
        .out_rcv_nxt(out_rcv_nxt), .out_rcv_high(out_rcv_high), .out_used_blocks(out_used_blocks),
        .out_conn_blocks(out_conn_blocks), .out_start_ptr(out_start_ptr), .out_end_ptr(out_end_ptr),
        .out_holes(out_holes), .out_hole_list(out_hole_list));

    always #1 clk = ~clk;

    integer fin, fout, n, conn, psn, cycles, k;
    reg [8*256-1:0] ops_file, out_file;
    initial begin
        if (!$value$plusargs("ops=%s", ops_file) || !$value$plusargs("out=%s", out_file)) begin
            $display("usage: +ops=FILE +out=FILE"); $finish;
        end
        fin = $fopen(ops_file, "r");
        fout = $fopen(out_file, "w");
        repeat (2) @(negedge clk);
        rst = 0;
        while (!$feof(fin)) begin
            n = $fscanf(fin, "%d %d\n", conn, psn);
            if (n == 2) begin
                // Inputs change and outputs are read at falling edges, away from the rising
                // edges the design acts on. `cycles` counts the clocks the operation held the
                // unit: the accepting edge up to the edge that registered its outputs.
                while (!in_ready) @(negedge clk);
                in_conn = conn; in_psn = psn; in_valid = 1;
                @(negedge clk);
                in_valid = 0;
                cycles = 1;
                while (!out_valid) begin @(negedge clk); cycles = cycles + 1; end
                $fwrite(fout, "%0d %0d %0d %0d %0d %0d %0d %0d", conn, psn, out_action, out_nack,
                        out_rcv_nxt, out_rcv_high, out_used_blocks, out_conn_blocks);
                if (out_rcv_nxt == out_rcv_high) $fwrite(fout, " -1 -1");
                else $fwrite(fout, " %0d %0d", out_start_ptr, out_end_ptr);
                $fwrite(fout, " %0d", out_holes);
                for (k = 0; k < 3; k = k + 1)
                    $fwrite(fout, " %0d %0d", out_hole_list[2*k*PSN_W +: PSN_W], out_hole_list[(2*k+1)*PSN_W +: PSN_W]);
                $fwrite(fout, " %0d\n", cycles);
            end
        end
        $fclose(fout);
        $finish;
    end
endmodule
