// Testbench for melo_rx_bitmap: reads operations "conn psn" (one a line) from +ops=FILE,
// offers them back to back (in_valid held high, the next operation presented as soon as one is
// accepted: valid/ready handshake), collects the outputs in order (one out_valid per
// operation) and writes one line per operation to +out=FILE with the outputs in the trace's
// column order (start/end pointers -1 for an empty list), then the clocks the operation
// occupied the unit: from the edge that accepted it to the first edge at which the unit could
// accept the next one (in_ready). tests/python/test_rtl_cosim.py compares the lines with the
// model's.
// `define MELO_TB_BUBBLES withholds in_valid on about one clock in three (pseudo-random), so
// that operations also arrive with gaps (the clock counts are then not the unit's).
`timescale 1ns/1ps
module melo_rx_bitmap_tb;
    parameter POOL_BLOCKS = 128;
    parameter BLOCK_BITS = 8;
    parameter CONNS = 4;
    parameter PSN_W = 24;
    parameter HOLES = 3;
    parameter MAX_OPS = 65536;
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
    // Rising edges so far: the next rising edge is number edges + 1.
    integer edges = 0;
    always @(posedge clk) edges <= edges + 1;

    // The operations, and per operation the outputs as collected and the clocks it occupied.
    reg [CONN_W-1:0] op_conn [0:MAX_OPS-1];
    reg [PSN_W-1:0]  op_psn  [0:MAX_OPS-1];
    reg [2:0]        r_action [0:MAX_OPS-1];
    reg              r_nack   [0:MAX_OPS-1];
    reg [PSN_W-1:0]  r_nxt    [0:MAX_OPS-1];
    reg [PSN_W-1:0]  r_high   [0:MAX_OPS-1];
    reg [CNT_W-1:0]  r_used   [0:MAX_OPS-1];
    reg [CNT_W-1:0]  r_cblk   [0:MAX_OPS-1];
    reg [PTR_W-1:0]  r_start  [0:MAX_OPS-1];
    reg [PTR_W-1:0]  r_end    [0:MAX_OPS-1];
    reg [1:0]        r_holes  [0:MAX_OPS-1];
    reg [6*PSN_W-1:0] r_hlist [0:MAX_OPS-1];
    integer          r_clocks [0:MAX_OPS-1];

    integer fin, fout, n, ops, conn, psn, i, j, k, accepted_at, seed;
    reg [8*256-1:0] ops_file, out_file;
    reg go = 0, pending = 0;

    // Outputs, in order: the j-th out_valid is the j-th operation's. Read at falling edges.
    initial begin
        j = 0;
        wait (go);
        while (j < ops) begin
            @(negedge clk);
            if (out_valid) begin
                r_action[j] = out_action; r_nack[j] = out_nack; r_nxt[j] = out_rcv_nxt;
                r_high[j] = out_rcv_high; r_used[j] = out_used_blocks; r_cblk[j] = out_conn_blocks;
                r_start[j] = out_start_ptr; r_end[j] = out_end_ptr; r_holes[j] = out_holes;
                r_hlist[j] = out_hole_list;
                j = j + 1;
            end
        end
    end

    initial begin
        if (!$value$plusargs("ops=%s", ops_file) || !$value$plusargs("out=%s", out_file)) begin
            $display("usage: +ops=FILE +out=FILE"); $finish;
        end
        fin = $fopen(ops_file, "r");
        ops = 0;
        while (!$feof(fin)) begin
            n = $fscanf(fin, "%d %d\n", conn, psn);
            if (n == 2) begin
                if (ops == MAX_OPS) begin $display("more than MAX_OPS operations"); $finish; end
                op_conn[ops] = conn; op_psn[ops] = psn; ops = ops + 1;
            end
        end
        $fclose(fin);
        seed = 1;
        repeat (2) @(negedge clk);
        rst = 0;
        go = 1;
        // Inputs change and in_ready is sampled at falling edges, away from the rising edges
        // the design acts on: an operation presented with in_ready high is accepted at the
        // next rising edge.
        i = 0;
        while (i < ops) begin
`ifdef MELO_TB_BUBBLES
            in_valid = ($random(seed) & 3) != 0;
`else
            in_valid = 1;
`endif
            in_conn = op_conn[i]; in_psn = op_psn[i];
            if (pending && in_ready) begin
                r_clocks[i - 1] = edges + 1 - accepted_at;
                pending = 0;
            end
            if (in_valid && in_ready) begin
                accepted_at = edges + 1;
                pending = 1;
                i = i + 1;
            end
            @(negedge clk);
        end
        in_valid = 0;
        while (!in_ready) @(negedge clk);
        if (pending) r_clocks[ops - 1] = edges + 1 - accepted_at;
        wait (j == ops);
        fout = $fopen(out_file, "w");
        for (i = 0; i < ops; i = i + 1) begin
            $fwrite(fout, "%0d %0d %0d %0d %0d %0d %0d %0d", op_conn[i], op_psn[i], r_action[i], r_nack[i],
                    r_nxt[i], r_high[i], r_used[i], r_cblk[i]);
            if (r_nxt[i] == r_high[i]) $fwrite(fout, " -1 -1");
            else $fwrite(fout, " %0d %0d", r_start[i], r_end[i]);
            $fwrite(fout, " %0d", r_holes[i]);
            for (k = 0; k < 3; k = k + 1)
                $fwrite(fout, " %0d %0d", r_hlist[i][2*k*PSN_W +: PSN_W], r_hlist[i][(2*k+1)*PSN_W +: PSN_W]);
            $fwrite(fout, " %0d\n", r_clocks[i]);
        end
        $fclose(fout);
        $finish;
    end
endmodule
