// Testbench for left_pool: reads operations "op conn front index" (one a line) from +ops=FILE,
// offers them back to back (in_valid held high, the next operation presented as soon as one is
// accepted: valid/ready handshake), collects the outputs in order (one out_valid per
// operation) and writes one line per operation to +out=FILE in the columns of
// crates/retx/src/hw/left_pool_trace.rs (op conn front index result charge register blocks
// start_ptr end_ptr used_blocks digest; register -1 when none, pointers -1 for an empty list),
// then the clocks the operation occupied the unit: from the edge that accepted it to the first
// edge at which the unit could accept the next one (in_ready).
// crates/retx/tests/left_rtl_cosim.rs compares the lines with the model's.
`timescale 1ns/1ps
module left_pool_tb;
    parameter POOL_BLOCKS = 256;
    parameter BLOCK_BITS = 8;
    parameter REGS = 3;
    parameter REG_BLOCKS = 100;
    parameter CONNS = 16;
    parameter IDX_W = 32;
    parameter MAX_OPS = 65536;
    localparam PTR_W = POOL_BLOCKS > 1 ? $clog2(POOL_BLOCKS) : 1;
    localparam CNT_W = $clog2(POOL_BLOCKS + 1);
    localparam CONN_W = CONNS > 1 ? $clog2(CONNS) : 1;
    localparam RI_W = REGS > 1 ? $clog2(REGS) : 1;

    reg clk = 0, rst = 1, in_valid = 0;
    reg [1:0] in_op = 0;
    reg [CONN_W-1:0] in_conn = 0;
    reg [IDX_W-1:0] in_front = 0, in_index = 0;
    wire in_ready, out_valid, out_reg_valid;
    wire [IDX_W-1:0] out_result;
    wire [15:0] out_charge;
    wire [BLOCK_BITS-1:0] out_digest;
    wire [RI_W-1:0] out_reg;
    wire [CNT_W-1:0] out_blocks, out_used;
    wire [PTR_W-1:0] out_start, out_end;

    left_pool #(.POOL_BLOCKS(POOL_BLOCKS), .BLOCK_BITS(BLOCK_BITS), .REGS(REGS),
                .REG_BLOCKS(REG_BLOCKS), .CONNS(CONNS), .IDX_W(IDX_W)) dut (
        .clk(clk), .rst(rst), .in_valid(in_valid), .in_ready(in_ready), .in_op(in_op),
        .in_conn(in_conn), .in_front(in_front), .in_index(in_index), .out_valid(out_valid),
        .out_result(out_result), .out_charge(out_charge), .out_digest(out_digest),
        .out_reg_valid(out_reg_valid), .out_reg(out_reg), .out_blocks(out_blocks),
        .out_start(out_start), .out_end(out_end), .out_used(out_used));

    always #1 clk = ~clk;
    // Rising edges so far: the next rising edge is number edges + 1.
    integer edges = 0;
    always @(posedge clk) edges <= edges + 1;

    reg [1:0]        op_op    [0:MAX_OPS-1];
    reg [CONN_W-1:0] op_conn  [0:MAX_OPS-1];
    reg [IDX_W-1:0]  op_front [0:MAX_OPS-1];
    reg [IDX_W-1:0]  op_index [0:MAX_OPS-1];
    reg [IDX_W-1:0]  r_result [0:MAX_OPS-1];
    reg [15:0]       r_charge [0:MAX_OPS-1];
    integer          r_reg    [0:MAX_OPS-1];
    reg [CNT_W-1:0]  r_blocks [0:MAX_OPS-1];
    reg [PTR_W-1:0]  r_start  [0:MAX_OPS-1];
    reg [PTR_W-1:0]  r_end    [0:MAX_OPS-1];
    reg [CNT_W-1:0]  r_used   [0:MAX_OPS-1];
    reg [BLOCK_BITS-1:0] r_digest [0:MAX_OPS-1];
    integer          r_clocks [0:MAX_OPS-1];

    integer fin, fout, n, ops, o, conn, i, j, accepted_at;
    reg [63:0] fr, ix;
    reg [8*256-1:0] ops_file, out_file;
    reg go = 0, pending = 0;

    // Outputs, in order: the j-th out_valid is the j-th operation's. Read at falling edges.
    initial begin
        j = 0;
        wait (go);
        while (j < ops) begin
            @(negedge clk);
            if (out_valid) begin
                r_result[j] = out_result; r_charge[j] = out_charge; r_digest[j] = out_digest;
                r_reg[j] = out_reg_valid ? out_reg : -1;
                r_blocks[j] = out_blocks; r_start[j] = out_start; r_end[j] = out_end;
                r_used[j] = out_used;
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
            n = $fscanf(fin, "%d %d %d %d\n", o, conn, fr, ix);
            if (n == 4) begin
                if (ops == MAX_OPS) begin $display("more than MAX_OPS operations"); $finish; end
                op_op[ops] = o; op_conn[ops] = conn; op_front[ops] = fr; op_index[ops] = ix;
                ops = ops + 1;
            end
        end
        $fclose(fin);
        repeat (2) @(negedge clk);
        rst = 0;
        @(negedge clk);           // in_ready settles before it is sampled
        go = 1;
        // Inputs change and in_ready is sampled at falling edges: an operation presented with
        // in_ready high is accepted at the next rising edge.
        i = 0;
        while (i < ops) begin
            in_valid = 1;
            in_op = op_op[i]; in_conn = op_conn[i]; in_front = op_front[i]; in_index = op_index[i];
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
            $fwrite(fout, "%0d %0d %0d %0d %0d %0d %0d %0d", op_op[i], op_conn[i], op_front[i], op_index[i],
                    r_result[i], r_charge[i], r_reg[i], r_blocks[i]);
            if (r_blocks[i] == 0) $fwrite(fout, " -1 -1");
            else $fwrite(fout, " %0d %0d", r_start[i], r_end[i]);
            $fwrite(fout, " %0d %0d %0d\n", r_used[i], r_digest[i], r_clocks[i]);
        end
        $fclose(fout);
        $finish;
    end
endmodule
