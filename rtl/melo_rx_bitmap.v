// MELO receiver bitmap manager (Lu et al., "Memory Efficient Loss Recovery for Hardware-based
// Transport in Datacenter", APNet'17, section 3.2.3-3.2.5).
//
// Must match, operation for operation, retx's model: MeloReceiver::on_data
// (crates/retx/src/transport/melo.rs) on the NIC's BitsPool / ConnBitmap
// (crates/retx/src/hw/bits_pool.rs), as traced by `retx trace melo`
// (crates/retx/src/observe/hw_trace.rs) and checked by tests/python/test_rtl_cosim.py.
//
// Structures (on-chip, one copy per NIC):
//   bits_mem[POOL_BLOCKS]  the shared bits pool, BLOCK_BITS bits per block
//   next_mem[POOL_BLOCKS]  next_ptr of each block: a connection's blocks form a list
//   avail_mem[POOL_BLOCKS] the free-slot stack; entries at index >= avail_ptr are free blocks,
//                          allocated from and returned to the top (avail_ptr)
// and per connection: RCV.NXT, RCV.HIGH, start_ptr, end_ptr and the HOLES most recent holes.
// A connection's list covers blocks blk(RCV.NXT) .. blk(RCV.HIGH - 1) (blk(x) = x / BLOCK_BITS)
// and is empty exactly when RCV.HIGH = RCV.NXT, so no base or length is stored.
//
// One data packet (connection, PSN) per operation; PSNs are PSN_W bits and compared in serial
// arithmetic (window 2^(PSN_W-1)). Outcome (out_action):
//   0 in order: delivered; the bitmap drains behind it; blocks RCV.NXT passed are freed
//   1 append (PSN >= RCV.HIGH): blocks allocated up to the PSN's, all or nothing; a PSN above
//     RCV.HIGH opens a hole and sends a NACK (out_nack) with the most recent holes
//   2 fill: a hole filled in the first or last block       3 old: PSN < RCV.NXT
//   4 repeat: bit already set                               5 drop: middle block
//   6 drop: not enough free blocks
//
// Timing: a new packet can be accepted every clock (valid/ready: in_ready is high while the
// unit is idle and in the last clock of the packet in flight). Two stages: the accepting edge
// reads the packet's connection state from the connection table into registers; the next
// clock decides the outcome from them and the pool, updates the pool, the stack and the holes,
// writes the connection back and registers the outputs (out_valid) at its closing edge, which
// also accepts the next packet. A packet accepted at that edge on the same connection takes
// the new state straight from the finishing logic (forwarding), not from the table. Clocks a
// packet occupies the unit (initiation interval, in_valid held high):
//   1  old, repeat, middle-block drop, no-block drop, fill, append within the last block,
//      append that allocates one block, in order with an empty list or a drain that ends in
//      the list's first block (freeing it if the drain reaches RCV.HIGH)
//   k  an append that allocates k > 1 blocks (one block popped and linked per clock)
//   1 + j  an in-order packet whose drain passes j blocks before the block it ends in (one
//      block walked and freed per clock; reaching the end of the list ends it)
// (melo-fig5a at 1 % loss: 1.04 clocks per packet on average, 6 at most; the previous,
// unpipelined version took 2.8 and 14.) A packet's outputs are registered at the edge that
// ends its last clock: the accepting edge plus its interval (2 edges for a 1-clock packet).
// Everything a packet decides is in one clock (pool read, outcome, hole tracker, forwarding
// mux): no timing analysis has been done, so what clock rate that allows is not known.
// After reset the free-slot stack and connection table are initialised, one entry per clock
// (max(POOL_BLOCKS, CONNS) clocks, in_ready low).
//
// `define MELO_BUG_STACK_SLOT plants a bug for the co-simulation's self-test: a freed block is
// written one slot above the stack top (the slot being vacated), not at the new top.

module melo_rx_bitmap #(
    parameter POOL_BLOCKS = 128,   // paper: 1 Kb pool in 1-byte blocks
    parameter BLOCK_BITS  = 8,     // power of two, >= 2
    parameter CONNS       = 4,
    parameter PSN_W       = 24,    // RoCEv2 PSN
    parameter HOLES       = 3      // holes a NACK carries (paper: 3), 1..3
) (
    input  wire                 clk,
    input  wire                 rst,
    input  wire                 in_valid,
    output wire                 in_ready,
    input  wire [CONN_W-1:0]    in_conn,
    input  wire [PSN_W-1:0]     in_psn,
    output reg                  out_valid,
    output reg  [2:0]           out_action,
    output reg                  out_nack,
    output reg  [PSN_W-1:0]     out_rcv_nxt,
    output reg  [PSN_W-1:0]     out_rcv_high,
    output reg  [CNT_W-1:0]     out_used_blocks,
    output reg  [CNT_W-1:0]     out_conn_blocks,
    output reg  [PTR_W-1:0]     out_start_ptr,
    output reg  [PTR_W-1:0]     out_end_ptr,
    output reg  [1:0]           out_holes,
    output reg  [3*2*PSN_W-1:0] out_hole_list   // {len2, start2, len1, start1, len0, start0}, oldest first
);
    localparam PTR_W  = POOL_BLOCKS > 1 ? $clog2(POOL_BLOCKS) : 1;
    localparam CNT_W  = $clog2(POOL_BLOCKS + 1);
    localparam CONN_W = CONNS > 1 ? $clog2(CONNS) : 1;
    localparam OFF_W  = $clog2(BLOCK_BITS);
    localparam BLK_W  = PSN_W - OFF_W;
    localparam INIT_N = POOL_BLOCKS > CONNS ? POOL_BLOCKS : CONNS;
    localparam HW     = 2 * PSN_W;               // one hole: {len, start}

    localparam S_INIT = 3'd0, S_IDLE = 3'd1, S_EXEC = 3'd2, S_ALLOC = 3'd3, S_DRAIN = 3'd4;

    localparam A_INORDER = 3'd0, A_APPEND = 3'd1, A_FILL = 3'd2, A_OLD = 3'd3,
               A_REPEAT = 3'd4, A_DROP_MIDDLE = 3'd5, A_DROP_NO_BLOCK = 3'd6;
    localparam H_NONE = 2'd0, H_PUSH = 2'd1, H_FILL = 2'd2, H_ADVANCE = 2'd3;

    // ---- memories ----
    reg [BLOCK_BITS-1:0] bits_mem  [0:POOL_BLOCKS-1];
    reg [PTR_W-1:0]      next_mem  [0:POOL_BLOCKS-1];
    reg [PTR_W-1:0]      avail_mem [0:POOL_BLOCKS-1];
    reg [CNT_W-1:0]      avail_ptr;
    reg [PSN_W-1:0]      nxt_mem   [0:CONNS-1];
    reg [PSN_W-1:0]      high_mem  [0:CONNS-1];
    reg [PTR_W-1:0]      start_mem [0:CONNS-1];
    reg [PTR_W-1:0]      end_mem   [0:CONNS-1];
    reg [3*HW+1:0]       holes_mem [0:CONNS-1];  // {count, hole2, hole1, hole0}

    // ---- the operation in flight ----
    reg [2:0]        state;
    reg [CNT_W-1:0]  init_i;
    reg [CONN_W-1:0] c;
    reg [PSN_W-1:0]  psn, nxt, high, p;
    reg [PTR_W-1:0]  start, last, cur;
    reg [BLK_W-1:0]  cur_blk, need;
    reg              has_list;
    reg [3*HW+1:0]   holes;

    // Serial-arithmetic order of PSNs: a before b.
    function before;
        input [PSN_W-1:0] a, b;
        reg [PSN_W-1:0] d;
        begin d = a - b; before = d[PSN_W-1]; end
    endfunction
    function [BLK_W-1:0] blk;
        input [PSN_W-1:0] x;
        blk = x[PSN_W-1:OFF_W];
    endfunction
    function [OFF_W-1:0] off;
        input [PSN_W-1:0] x;
        off = x[OFF_W-1:0];
    endfunction
    // The first zero bit of w at or above bit `from`; BLOCK_BITS when there is none.
    function [OFF_W:0] first_zero;
        input [BLOCK_BITS-1:0] w;
        input [OFF_W-1:0] from;
        integer i;
        reg found;
        begin
            first_zero = BLOCK_BITS; found = 0;
            for (i = 0; i < BLOCK_BITS; i = i + 1)
                if (!found && i >= from && !w[i]) begin first_zero = i; found = 1; end
        end
    endfunction

    // ---- the hole tracker (melo.rs Holes): push, fill, advance on {count, h2, h1, h0} ----
    // Entries are addressed with constant indices only (a variable part-select would build a
    // multiplier).
    reg  [1:0]       hop;
    reg  [PSN_W-1:0] harg, harg2;
    reg  [3*HW+1:0]  holes_next;
    always @* begin : hole_tracker
        reg [2:0] n, k;
        reg [4*HW-1:0] t, u;           // up to 4 holes while splitting
        reg [PSN_W-1:0] s, l, d, hs, hl;
        integer i, hit;
        n = holes[3*HW+1:3*HW];
        t = {{HW{1'b0}}, holes[3*HW-1:0]};
        u = t;
        holes_next = holes;
        hit = 3; hs = 0; hl = 0;
        case (hop)
        H_PUSH: begin  // a new hole above every tracked one; the oldest falls out when full
            if (n == HOLES) begin
                t = t >> HW;
                n = n - 1'b1;
            end
            for (i = 0; i < 3; i = i + 1)
                if (i == n) t[i*HW +: HW] = {harg2, harg};
            holes_next = {n[1:0] + 2'd1, t[3*HW-1:0]};
        end
        H_FILL: begin  // harg arrived: shrink or split the hole holding it
            for (i = 2; i >= 0; i = i - 1) begin
                s = t[i*HW +: PSN_W]; l = t[i*HW+PSN_W +: PSN_W];
                if (i < n && (harg - s) < l) begin hit = i; hs = s; hl = l; end
            end
            if (hit < 3) begin
                if (hl == 1) begin
                    for (i = 0; i < 3; i = i + 1)
                        if (i >= hit) u[i*HW +: HW] = t[(i+1)*HW +: HW];
                    n = n - 1'b1;
                end else if (harg == hs) begin
                    for (i = 0; i < 3; i = i + 1)
                        if (i == hit) u[i*HW +: HW] = {hl - 1'b1, hs + 1'b1};
                end else if (harg == hs + hl - 1'b1) begin
                    for (i = 0; i < 3; i = i + 1)
                        if (i == hit) u[i*HW +: HW] = {hl - 1'b1, hs};
                end else begin
                    // Split in two; if that makes one too many, the oldest is forgotten.
                    for (i = 0; i < 4; i = i + 1)
                        if (i == hit) u[i*HW +: HW] = {harg - hs, hs};
                        else if (i == hit + 1) u[i*HW +: HW] = {hs + hl - harg - 1'b1, harg + 1'b1};
                        else if (i > hit + 1) u[i*HW +: HW] = t[(i > 0 ? i - 1 : 0)*HW +: HW];
                    n = n + 1'b1;
                    if (n > HOLES) begin
                        u = u >> HW;
                        n = HOLES;
                    end
                end
                holes_next = {n[1:0], u[3*HW-1:0]};
            end
        end
        H_ADVANCE: begin  // RCV.NXT moved to harg: holes below it are gone, one across it trimmed
            k = 0;
            u = 0;
            for (i = 0; i < 3; i = i + 1)
                if (i < n) begin
                    s = t[i*HW +: PSN_W]; l = t[i*HW+PSN_W +: PSN_W];
                    d = harg - s;
                    // Kept entries move down to slot k (k <= i).
                    if (!(before(s, harg) && d >= l)) begin
                        if (k == 0) u[0 +: HW] = before(s, harg) ? {l - d, harg} : t[i*HW +: HW];
                        else if (k == 1) u[HW +: HW] = before(s, harg) ? {l - d, harg} : t[i*HW +: HW];
                        else u[2*HW +: HW] = before(s, harg) ? {l - d, harg} : t[i*HW +: HW];
                        k = k + 1'b1;
                    end
                end
            holes_next = {k[1:0], u[3*HW-1:0]};
        end
        default: ;
        endcase
    end

    // ---- what the operation in flight is, from its loaded state ----
    wire exec  = state == S_EXEC;       // the operation's first clock
    wire alloc = state == S_ALLOC;      // further blocks of an append
    wire drain = state == S_DRAIN;      // further blocks of an in-order drain
    wire [PSN_W-1:0]      psn_next  = psn + 1'b1;
    wire [BLK_W-1:0]      last_blk  = blk(high - 1'b1);
    wire [CNT_W-1:0]      free_blocks = POOL_BLOCKS - avail_ptr;
    wire [PTR_W-1:0]      top_block = avail_mem[avail_ptr[PTR_W-1:0]];
    wire [BLOCK_BITS-1:0] psn_bit   = {{(BLOCK_BITS-1){1'b0}}, 1'b1} << off(psn);
    wire in_first = blk(psn) == blk(nxt);
    wire in_last  = blk(psn) == last_blk;
    wire [PTR_W-1:0]      fill_block = in_first ? start : last;
    wire [BLOCK_BITS-1:0] fill_bits  = bits_mem[fill_block];
    // Append: blocks to allocate so that the list reaches blk(psn).
    wire [BLK_W-1:0] append_need = has_list ? blk(psn) - last_blk : blk(psn) - blk(nxt) + 1'b1;

    wire is_old      = before(psn, nxt);
    wire is_inorder  = !is_old && psn == nxt;
    wire in_holes    = !is_old && !is_inorder && before(psn, high);
    wire is_middle   = in_holes && !in_first && !in_last;
    wire is_repeat   = in_holes && !is_middle && fill_bits[off(psn)];
    wire is_fill     = in_holes && !is_middle && !is_repeat;
    wire is_append   = !is_old && !is_inorder && !in_holes;
    wire is_no_block = is_append && append_need > free_blocks;

    // Allocation step (the first clock of an append that needs blocks, then S_ALLOC): pop the
    // stack top and link it after the list's last block; d_need blocks are still to come.
    wire [BLK_W-1:0] d_need  = exec ? append_need : need;
    wire alloc_step = exec && is_append && !is_no_block && append_need != 0 || alloc;
    wire appending  = exec && is_append && !is_no_block || alloc;

    // Drain step (the first clock of an in-order packet with a list, then S_DRAIN): the cursor
    // d_p lies in block d_cur (number d_cur_blk) or just past it. One block per clock: the block
    // is either wholly delivered (freed; the walk goes on to the next block unless it was the
    // last) or the drain stops in it.
    wire inorder_step = exec && is_inorder && has_list || drain;
    wire [PSN_W-1:0] d_p       = exec ? psn_next : p;
    wire [PTR_W-1:0] d_cur     = exec ? start : cur;
    wire [BLK_W-1:0] d_cur_blk = exec ? blk(nxt) : cur_blk;
    wire [BLOCK_BITS-1:0] cur_bits = bits_mem[d_cur];
    wire [OFF_W:0]   zero_at   = first_zero(cur_bits, off(d_p));
    wire [PSN_W-1:0] cur_base  = {d_cur_blk, {OFF_W{1'b0}}};
    wire [PSN_W-1:0] block_end = cur_base + BLOCK_BITS;
    wire drain_whole = blk(d_p) != d_cur_blk || zero_at == BLOCK_BITS;  // all of d_cur delivered
    wire drain_lastb = drain_whole && d_cur_blk == last_blk;             // ... and it was the last
    wire [PSN_W-1:0] drain_front = cur_base + zero_at;
    wire drain_all   = !drain_whole && drain_front == high;              // stops at RCV.HIGH: last block goes
    wire drain_free  = inorder_step && (drain_whole || drain_all);
    // Where RCV.NXT lands when the drain finishes in this clock.
    wire [PSN_W-1:0] drain_to = drain_lastb ? block_end : drain_front;

    // ---- the finishing clock: outcome and the connection's new state (f_*) ----
    reg              f_valid, f_nack;
    reg [2:0]        f_action;
    reg [PSN_W-1:0]  f_nxt, f_high;
    reg [PTR_W-1:0]  f_start, f_last;
    reg [CNT_W-1:0]  f_used;
    always @* begin
        f_valid = 1'b0; f_action = A_OLD; f_nack = 1'b0;
        f_nxt = nxt; f_high = high; f_start = start; f_last = last; f_used = avail_ptr;
        if (exec && !is_inorder && !appending) begin
            f_valid = 1'b1;
            f_action = is_old ? A_OLD : is_middle ? A_DROP_MIDDLE : is_repeat ? A_REPEAT
                     : is_fill ? A_FILL : A_DROP_NO_BLOCK;
        end else if (appending && (!alloc_step || d_need == 1)) begin
            f_valid = 1'b1; f_action = A_APPEND; f_nack = psn != high; f_high = psn_next;
            if (alloc_step) begin
                f_start = has_list ? start : top_block; f_last = top_block; f_used = avail_ptr + 1'b1;
            end
        end else if (exec && is_inorder && !has_list) begin
            f_valid = 1'b1; f_action = A_INORDER;
            f_nxt = psn_next; f_high = before(high, psn_next) ? psn_next : high;
        end else if (inorder_step && (drain_lastb || !drain_whole)) begin
            f_valid = 1'b1; f_action = A_INORDER;
            f_nxt = drain_to; f_high = drain_lastb ? block_end : high; f_start = d_cur;
            if (drain_free) f_used = avail_ptr - 1'b1;
        end
    end

    // One write port per pool memory.
    wire bits_we = exec && (is_fill || appending && append_need == 0) || alloc_step;
    wire [PTR_W-1:0] bits_wa = alloc_step ? top_block : is_fill ? fill_block : last;
    wire [BLOCK_BITS-1:0] bits_wd = alloc_step ? (d_need == 1 ? psn_bit : {BLOCK_BITS{1'b0}})
                                  : (is_fill ? fill_bits : bits_mem[last]) | psn_bit;
    // The slot a freed block goes to: the new top.
`ifdef MELO_BUG_STACK_SLOT
    wire [CNT_W-1:0] free_slot = avail_ptr;
`else
    wire [CNT_W-1:0] free_slot = avail_ptr - 1'b1;
`endif
    wire avail_we = (state == S_INIT && init_i < POOL_BLOCKS) || drain_free;
    wire [PTR_W-1:0] avail_wa = state == S_INIT ? init_i[PTR_W-1:0] : free_slot[PTR_W-1:0];
    wire [PTR_W-1:0] avail_wd = state == S_INIT ? init_i[PTR_W-1:0] : d_cur;

    // Which hole update the finishing clock applies.
    always @* begin
        hop = H_NONE; harg = psn; harg2 = {PSN_W{1'b0}};
        if (exec && is_fill)
            hop = H_FILL;
        else if (appending && psn != high) begin
            hop = H_PUSH; harg = high; harg2 = psn - high;
        end else if (exec && is_inorder && !has_list) begin
            hop = H_ADVANCE; harg = psn_next;
        end else if (inorder_step) begin
            hop = H_ADVANCE; harg = drain_to;
        end
    end

    // Issue: a new operation is accepted when the unit is idle or in the clock its operation
    // in flight finishes. The finishing operation writes its connection's state back at that
    // edge; an operation accepted at the same edge on the same connection takes the new state
    // directly from the finishing logic (forwarding), any other reads the connection table.
    assign in_ready = state == S_IDLE || f_valid;
    wire accept = in_valid && in_ready;
    wire fwd = f_valid && in_conn == c;

    always @(posedge clk) begin
        if (bits_we) bits_mem[bits_wa] <= bits_wd;
        if (avail_we) avail_mem[avail_wa] <= avail_wd;
        if (alloc_step && has_list) next_mem[last] <= top_block;
        if (f_valid || state == S_INIT && init_i < CONNS) begin
            nxt_mem[f_valid ? c : init_i[CONN_W-1:0]] <= f_valid ? f_nxt : {PSN_W{1'b0}};
            high_mem[f_valid ? c : init_i[CONN_W-1:0]] <= f_valid ? f_high : {PSN_W{1'b0}};
            start_mem[f_valid ? c : init_i[CONN_W-1:0]] <= f_start;
            end_mem[f_valid ? c : init_i[CONN_W-1:0]] <= f_last;
            holes_mem[f_valid ? c : init_i[CONN_W-1:0]] <= f_valid ? holes_next : {(3*HW+2){1'b0}};
        end
    end

    always @(posedge clk) begin
        out_valid <= 1'b0;
        if (f_valid) begin
            out_valid <= 1'b1;
            out_action <= f_action;
            out_nack <= f_nack;
            out_rcv_nxt <= f_nxt;
            out_rcv_high <= f_high;
            out_used_blocks <= f_used;
            out_conn_blocks <= f_high == f_nxt ? {CNT_W{1'b0}} : blk(f_high - 1'b1) - blk(f_nxt) + 1'b1;
            out_start_ptr <= f_start;
            out_end_ptr <= f_last;
            out_holes <= holes_next[3*HW+1:3*HW];
            out_hole_list <= holes_next[3*HW-1:0];
        end
        if (rst) begin
            out_valid <= 1'b0;
            state <= S_INIT;
            init_i <= 0;
            avail_ptr <= 0;
        end else begin
            if (alloc_step) avail_ptr <= avail_ptr + 1'b1;
            if (drain_free) avail_ptr <= avail_ptr - 1'b1;
            case (state)
            S_INIT: begin
                init_i <= init_i + 1'b1;
                if (init_i == INIT_N - 1) state <= S_IDLE;
            end
            default: begin
                if (alloc_step && !f_valid) begin
                    // More blocks to come: the one just popped is the list's new last block.
                    if (!has_list) start <= top_block;
                    last <= top_block;
                    has_list <= 1'b1;
                    need <= d_need - 1'b1;
                    state <= S_ALLOC;
                end else if (inorder_step && !f_valid) begin
                    // Block d_cur wholly delivered and not the last: on to the next one.
                    cur <= next_mem[d_cur];
                    start <= next_mem[d_cur];
                    cur_blk <= d_cur_blk + 1'b1;
                    p <= block_end;
                    state <= S_DRAIN;
                end else if (accept) begin
                    c <= in_conn;
                    psn <= in_psn;
                    nxt <= fwd ? f_nxt : nxt_mem[in_conn];
                    high <= fwd ? f_high : high_mem[in_conn];
                    start <= fwd ? f_start : start_mem[in_conn];
                    last <= fwd ? f_last : end_mem[in_conn];
                    holes <= fwd ? holes_next : holes_mem[in_conn];
                    has_list <= fwd ? f_nxt != f_high : nxt_mem[in_conn] != high_mem[in_conn];
                    state <= S_EXEC;
                end else if (f_valid)
                    state <= S_IDLE;
            end
            endcase
        end
    end
endmodule
