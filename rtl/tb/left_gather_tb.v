// Testbench for left_gather: reads operations "op conn now front index cached" (one a line)
// from +ops=FILE, offers them back to back (valid/ready handshake), collects the outputs in
// order (one out_valid per operation) and writes one line per operation to +out=FILE in the
// columns of crates/retx/src/hw/left_gather_trace.rs (op conn now front index cached fast
// degree fifo fill evicted closed batch_count batch_hash deadline; -1 for no FIFO, no
// eviction, no deadline), then the clocks the operation occupied the unit (from the edge that
// accepted it to the first edge at which the unit could accept the next one). It also checks
// that the batch stream (batch_valid) carried exactly out_batch_count packets.
// crates/retx/tests/it/left_gather_cosim.rs compares the lines with the model's.
`timescale 1ns/1ps
module left_gather_tb;
    parameter FIFOS = 8;
    parameter DEPTH = 8;
    parameter CONNS = 16;
    parameter VARIANT = 0;
    parameter THRESHOLD = 32;
    parameter CONN_THRESHOLD = 0;
    parameter [63:0] TIMEOUT = 2000000;
    parameter IDX_W = 32;
    parameter TIME_W = 48;
    parameter MAX_OPS = 65536;
    localparam CONN_W = CONNS > 1 ? $clog2(CONNS) : 1;
    localparam FI_W = FIFOS > 1 ? $clog2(FIFOS) : 1;
    localparam CNT_W = $clog2(DEPTH + 1);
    localparam DEG_W = 25;

    reg clk = 0, rst = 1, in_valid = 0, in_cached = 0;
    reg [2:0] in_op = 0;
    reg [CONN_W-1:0] in_conn = 0;
    reg [TIME_W-1:0] in_now = 0;
    reg [IDX_W-1:0] in_front = 0, in_index = 0;
    wire in_ready, out_valid, out_fast, out_fifo_valid, out_evict_valid, out_deadline_valid;
    wire [DEG_W-1:0] out_degree;
    wire [FI_W-1:0] out_fifo;
    wire [CNT_W-1:0] out_fill;
    wire [CONN_W-1:0] out_evict, batch_conn;
    wire [FIFOS-1:0] out_closed;
    wire [15:0] out_batch_count;
    wire [31:0] out_batch_hash;
    wire [TIME_W-1:0] out_deadline;
    wire batch_valid;
    wire [IDX_W-1:0] batch_index;

    left_gather #(.FIFOS(FIFOS), .DEPTH(DEPTH), .CONNS(CONNS), .VARIANT(VARIANT),
                  .THRESHOLD(THRESHOLD), .CONN_THRESHOLD(CONN_THRESHOLD), .TIMEOUT(TIMEOUT),
                  .IDX_W(IDX_W), .TIME_W(TIME_W)) dut (
        .clk(clk), .rst(rst), .in_valid(in_valid), .in_ready(in_ready), .in_op(in_op),
        .in_conn(in_conn), .in_now(in_now), .in_front(in_front), .in_index(in_index),
        .in_cached(in_cached), .out_valid(out_valid), .out_fast(out_fast), .out_degree(out_degree),
        .out_fifo_valid(out_fifo_valid), .out_fifo(out_fifo), .out_fill(out_fill),
        .out_evict_valid(out_evict_valid), .out_evict(out_evict), .out_closed(out_closed),
        .out_batch_count(out_batch_count), .out_batch_hash(out_batch_hash),
        .out_deadline_valid(out_deadline_valid), .out_deadline(out_deadline),
        .batch_valid(batch_valid), .batch_conn(batch_conn), .batch_index(batch_index));

    always #1 clk = ~clk;
    integer edges = 0;
    always @(posedge clk) edges <= edges + 1;

    reg [2:0]   op_op     [0:MAX_OPS-1];
    integer     op_conn   [0:MAX_OPS-1];
    reg [63:0]  op_now    [0:MAX_OPS-1];
    reg [63:0]  op_front  [0:MAX_OPS-1];
    reg [63:0]  op_index  [0:MAX_OPS-1];
    reg         op_cached [0:MAX_OPS-1];
    reg         r_fast    [0:MAX_OPS-1];
    reg [DEG_W-1:0] r_degree [0:MAX_OPS-1];
    integer     r_fifo    [0:MAX_OPS-1];
    integer     r_fill    [0:MAX_OPS-1];
    integer     r_evict   [0:MAX_OPS-1];
    reg [FIFOS-1:0] r_closed [0:MAX_OPS-1];
    integer     r_count   [0:MAX_OPS-1];
    reg [31:0]  r_hash    [0:MAX_OPS-1];
    reg [63:0]  r_deadline [0:MAX_OPS-1];
    reg         r_dl_valid [0:MAX_OPS-1];
    integer     r_clocks  [0:MAX_OPS-1];

    integer fin, fout, n, ops, o, conn, cch, i, j, accepted_at, streamed;
    reg [63:0] nw, fr, ix;
    reg [8*256-1:0] ops_file, out_file;
    reg go = 0, pending = 0;

    // The batch stream: packets handed on since the last out_valid.
    initial streamed = 0;
    always @(posedge clk) if (batch_valid) streamed = streamed + 1;

    initial begin
        j = 0;
        wait (go);
        while (j < ops) begin
            @(negedge clk);
            if (out_valid) begin
                r_fast[j] = out_fast; r_degree[j] = out_degree;
                r_fifo[j] = out_fifo_valid ? out_fifo : -1;
                r_fill[j] = out_fill;
                r_evict[j] = out_evict_valid ? out_evict : -1;
                r_closed[j] = out_closed; r_count[j] = out_batch_count; r_hash[j] = out_batch_hash;
                r_deadline[j] = out_deadline; r_dl_valid[j] = out_deadline_valid;
                if (streamed != out_batch_count) begin
                    $display("op %0d: %0d packets streamed, out_batch_count %0d", j, streamed, out_batch_count);
                    $finish;
                end
                streamed = 0;
                j = j + 1;
            end
        end
    end

    initial begin
        if (!$value$plusargs("ops=%s", ops_file) || !$value$plusargs("out=%s", out_file)) begin
            $display("usage: +ops=FILE +out=FILE"); $finish;
        end
        fin = $fopen(ops_file, "r");
        if (fin == 0) begin $display("cannot open %0s", ops_file); $finish; end
        ops = 0;
        while (!$feof(fin)) begin
            n = $fscanf(fin, "%d %d %d %d %d %d\n", o, conn, nw, fr, ix, cch);
            if (n == 6) begin
                if (ops == MAX_OPS) begin $display("more than MAX_OPS operations"); $finish; end
                op_op[ops] = o; op_conn[ops] = conn; op_now[ops] = nw; op_front[ops] = fr;
                op_index[ops] = ix; op_cached[ops] = cch;
                ops = ops + 1;
            end
        end
        $fclose(fin);
        repeat (2) @(negedge clk);
        rst = 0;
        @(negedge clk);
        go = 1;
        i = 0;
        while (i < ops) begin
            in_valid = 1;
            in_op = op_op[i]; in_conn = op_conn[i]; in_now = op_now[i]; in_front = op_front[i];
            in_index = op_index[i]; in_cached = op_cached[i];
            if (pending && in_ready) begin
                r_clocks[i - 1] = edges + 1 - accepted_at;
                pending = 0;
            end
            if (in_ready) begin
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
            $fwrite(fout, "%0d %0d %0d %0d %0d %0d", op_op[i], op_conn[i], op_now[i], op_front[i],
                    op_index[i], op_cached[i]);
            $fwrite(fout, " %0d %0d %0d %0d %0d %0d %0d %0d", r_fast[i], r_degree[i], r_fifo[i],
                    r_fill[i], r_evict[i], r_closed[i], r_count[i], r_hash[i]);
            if (r_dl_valid[i]) $fwrite(fout, " %0d", r_deadline[i]);
            else $fwrite(fout, " -1");
            $fwrite(fout, " %0d\n", r_clocks[i]);
        end
        $fclose(fout);
        $finish;
    end
endmodule
