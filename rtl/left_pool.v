// LEFT's dual-state bitmap pool (Huang et al., "LEFT: LightwEight and FasT packet Reordering
// for RDMA", APNet'24; slides "Dual-state bitmap pool" and "Bitmap Acceleration").
//
// Must match, operation for operation, retx's model DualPool (crates/retx/src/hw/left_pool.rs
// on BitsPool::with_free_bitmap, crates/retx/src/hw/bits_pool.rs), as recorded by
// crates/retx/src/hw/left_pool_trace.rs and checked by crates/retx/tests/left_rtl_cosim.rs.
//
// Structures:
//   bits_mem[POOL_BLOCKS]   the shared pool, BLOCK_BITS bits per block
//   next_mem[POOL_BLOCKS]   Nxt_ptr of every block: a connection's blocks form a list
//   free_map                the available-block bitmap (bit b set: block b free); a priority
//                           encoder hands out the lowest free block
//   per connection          start_ptr, end_ptr, base (packet index of the list's first bit),
//                           blocks, and the loop register holding it (home), if one does
//   REGS loop registers     owner, base (block-aligned packet index of bit 0 of the window),
//                           last use (for LRU), and a ring of RING_BLOCKS blocks holding the
//                           window [base, base + REG_BLOCKS * BLOCK_BITS) plainly
// The rings live in REGS + 1 physical buffers (ring_mem, with a valid bit per block in nz): a
// register names its buffer, and one spare buffer takes a bitmap being brought in while the
// evicted register's buffer is written back, after which the two swap roles. A ring is cleared
// in one clock by clearing its valid bits. The ring holds RING_BLOCKS = REG_BLOCKS rounded up
// to 64 bits, as the model's (64-bit words); a register's window starts at ring slot offb (0
// when it is loaded), so its slots are the model's rotated by a constant: the same bits.
//
// Operations (in_op), one at a time, valid/ready handshake (in_ready high while idle):
//   0 update(conn, front, index)  -> result 1 set / 0 no room; charge = the model's cycles
//   1 bring_in(conn, front)       -> result 1 ok / 0 refused; charge = blocks moved in + out
//   2 take_run(conn, front)       -> result = the run's length; charge = the model's cycles
//   3 release(conn)               -> result 0
// out_valid pulses once per operation, with out_result, out_charge (the pool cycles the model
// charges, computed from this design's own state: a check of its structure) and out_digest
// (bit k: packet a + k is marked, a the block-aligned index of: the update's packet, the new
// RCV.NXT after a run, RCV.NXT after a bring-in that left the bitmap in a register; else 0).
// While out_valid is high, out_reg (out_reg_valid), out_blocks, out_start, out_end and
// out_used show the connection's register, its list and the pool's blocks in use.
//
// Timing (clocks an operation holds the unit, in_valid held): an operation is decoded from the
// inputs at the edge that accepts it, which also does its first step (one block moved, one link
// followed, one block scanned); each further step takes a clock:
//   update   1 in a register (a hit), or in a list's first or last block (start_ptr and end_ptr
//            are at hand); 1 + blocks allocated - 1 (one per clock, the lowest free each; the last
//            takes the bit); 1 + links walked to a middle block. The model charges allocations +
//            links + 1. Beyond a register, its write-back comes first: + max(1, blocks written).
//   bring_in max(1, blocks read in) + blocks written back by the evicted register (1 if it held
//            none): the model's charge, in + out, when a block is read in and one written back;
//            1 for a cached connection or a refusal.
//   take_run blocks examined (1 if the run ends in the first; a list frees those it passes at
//            the same time, and those below RCV.NXT one a clock). The model charges a list 1 a
//            block read, as here, and a register 1 whatever the run's length.
//   release  1 + blocks of the list freed.
// co-simulated over LEFT runs (crates/retx/tests/left_rtl_cosim.rs prints the table): within a
// few percent of the model's charge on average; pool updates take fewer clocks (no walk to the
// last block), empty bring-ins and refusals one more (the model charges 0). No timing analysis
// has been done: the decode, the window's priority encoder (which block of an evicted register
// is its last) and the lowest-free encoder are each one clock of combinational logic.
//
// `define LEFT_BUG_PRIORITY plants a bug for the co-simulation's self-test: the priority
// encoder hands out the highest free block. `define LEFT_BUG_LRU: the most recently used
// register is evicted instead of the least.

module left_pool #(
    parameter POOL_BLOCKS = 256,   // model default: 2 Kb pool in 1-byte blocks
    parameter BLOCK_BITS  = 8,     // power of two, 2..64
    parameter REGS        = 3,     // loop registers (slides: 3 in simulation, 2 on the FPGA)
    parameter REG_BLOCKS  = 100,   // register_bits / BLOCK_BITS (model default: 800 bits)
    parameter CONNS       = 16,
    parameter IDX_W       = 32,    // packet index width
    parameter TICK_W      = 32,    // LRU clock width
    parameter CHG_W       = 16
) (
    input  wire                 clk,
    input  wire                 rst,
    input  wire                 in_valid,
    output wire                 in_ready,
    input  wire [1:0]           in_op,
    input  wire [CONN_W-1:0]    in_conn,
    input  wire [IDX_W-1:0]     in_front,
    input  wire [IDX_W-1:0]     in_index,
    output reg                  out_valid,
    output reg  [IDX_W-1:0]     out_result,
    output reg  [CHG_W-1:0]     out_charge,
    output reg  [BLOCK_BITS-1:0] out_digest,
    output wire                 out_reg_valid,
    output wire [RI_W-1:0]      out_reg,
    output wire [CNT_W-1:0]     out_blocks,
    output wire [PTR_W-1:0]     out_start,
    output wire [PTR_W-1:0]     out_end,
    output wire [CNT_W-1:0]     out_used
);
    localparam BB      = BLOCK_BITS;
    localparam LOG_BB  = $clog2(BB);
    localparam NB      = POOL_BLOCKS;
    localparam W       = REG_BLOCKS;
    localparam RB      = ((W * BB + 63) / 64) * 64 / BB;   // ring blocks
    localparam PHYS    = REGS + 1;
    localparam PTR_W   = NB > 1 ? $clog2(NB) : 1;
    localparam CNT_W   = $clog2(NB + 1);
    localparam CONN_W  = CONNS > 1 ? $clog2(CONNS) : 1;
    localparam RI_W    = REGS > 1 ? $clog2(REGS) : 1;
    localparam PH_W    = $clog2(PHYS);
    localparam SL_W    = RB > 1 ? $clog2(RB) : 1;
    localparam WC_W    = $clog2(W + 1);
    localparam XW      = IDX_W + 1;                           // index arithmetic without overflow
    localparam [XW-1:0] WIDTH = W * BB;

    localparam OP_UPDATE = 2'd0, OP_BRING = 2'd1, OP_TAKE = 2'd2, OP_RELEASE = 2'd3;
    localparam S_IDLE = 4'd0, S_UPOOL = 4'd1, S_ALLOC = 4'd2, S_WALK = 4'd3,
               S_WB = 4'd5, S_BI_READ = 4'd6, S_TR_REG = 4'd7, S_TR_POOL = 4'd8, S_REL = 4'd9;

    // ---- the pool ----
    reg [BB-1:0]    bits_mem [0:NB-1];
    reg [PTR_W-1:0] next_mem [0:NB-1];
    reg [NB-1:0]    free_map;
    reg [CNT_W-1:0] nfree;
    // ---- connections ----
    reg [PTR_W-1:0] l_start  [0:CONNS-1];
    reg [PTR_W-1:0] l_end    [0:CONNS-1];
    reg [IDX_W-1:0] l_base   [0:CONNS-1];
    reg [CNT_W-1:0] l_blocks [0:CONNS-1];
    reg             home_v   [0:CONNS-1];
    reg [RI_W-1:0]  home     [0:CONNS-1];
    // ---- loop registers and their ring buffers ----
    reg [CONN_W-1:0] r_owner [0:REGS-1];
    reg              r_own_v [0:REGS-1];
    reg [IDX_W-1:0]  r_base  [0:REGS-1];
    reg [TICK_W-1:0] r_used  [0:REGS-1];
    reg [PH_W-1:0]   r_phys  [0:REGS-1];
    reg [SL_W-1:0]   r_offb  [0:REGS-1];
    reg [PH_W-1:0]   spare;
    reg [BB-1:0]     ring_mem [0:PHYS*RB-1];
    reg [RB-1:0]     nz [0:PHYS-1];
    reg [TICK_W-1:0] tick;

    // ---- the operation in flight ----
    reg [3:0]        state;
    reg [1:0]        op;
    reg [CONN_W-1:0] c;
    reg [IDX_W-1:0]  front, idx, ti;
    reg [CHG_W-1:0]  charge;
    reg [BB-1:0]     dig;
    reg [PTR_W-1:0]  cur, wprev;
    reg [CNT_W-1:0]  cnt;
    reg [RI_W-1:0]   wr;                  // register written back / brought into
    reg [WC_W-1:0]   wneed, wj;           // its blocks to write back, written so far
    reg              wb_for_bring;        // the write-back is a bring-in's eviction
    reg [IDX_W-1:0]  bi_base;
    reg [CNT_W-1:0]  bi_n, bi_j;
    reg [XW-1:0]     bi_dj;               // the digest's block within the brought-in list
    reg [IDX_W-1:0]  tb0;                 // take_run on a list: its base and length before
    reg [CNT_W-1:0]  tn0;

    assign in_ready = state == S_IDLE && !rst;
    assign out_reg_valid = home_v[c];
    assign out_reg = home[c];
    assign out_blocks = l_blocks[c];
    assign out_start = l_start[c];
    assign out_end = l_end[c];
    assign out_used = NB - nfree;

    function [XW-1:0] blk;              // block number of a packet index
        input [IDX_W-1:0] x;
        blk = x >> LOG_BB;
    endfunction
    function [IDX_W-1:0] aligned;
        input [IDX_W-1:0] x;
        aligned = (x >> LOG_BB) << LOG_BB;
    endfunction
    // (off + d) mod RB, for off < RB and d < 2 * RB (a window's ring never jumps further: the
    // receiver takes the run at every in-order packet).
    function [SL_W-1:0] slot_add;
        input [SL_W-1:0] off;
        input [XW-1:0] d;
        reg [XW+1:0] s;
        begin
            s = off + d;
            if (s >= RB) s = s - RB;
            if (s >= RB) s = s - RB;
            slot_add = s[SL_W-1:0];
        end
    endfunction
    function [BB-1:0] ring_rd;
        input [PH_W-1:0] p;
        input [SL_W-1:0] s;
        ring_rd = nz[p][s] ? ring_mem[p * RB + s] : {BB{1'b0}};
    endfunction
    // The window's highest block holding a set bit: {found, offset from the window's start}.
    function [WC_W:0] win_top;
        input [RB-1:0] v;
        input [SL_W-1:0] off;
        reg [2*RB-1:0] sh;
        integer k;
        begin
            sh = {v, v} >> off;
            win_top = 0;
            for (k = 0; k < W; k = k + 1)
                if (sh[k]) win_top = {1'b1, k[WC_W-1:0]};
        end
    endfunction
    // Consecutive set bits of b from bit pos upwards.
    function [LOG_BB:0] ones_from;
        input [BB-1:0] b;
        input [LOG_BB-1:0] pos;
        reg [BB-1:0] sh;
        reg stop;
        integer k;
        begin
            sh = b >> pos;
            ones_from = 0;
            stop = 0;
            for (k = 0; k < BB; k = k + 1)
                if (!stop && k < BB - pos && sh[k]) ones_from = ones_from + 1;
                else stop = 1;
        end
    endfunction
    function [BB-1:0] run_mask;         // bits pos .. pos + n - 1
        input [LOG_BB-1:0] pos;
        input [LOG_BB:0] n;
        run_mask = ((({BB{1'b0}} | 1'b1) << n) - 1) << pos;
    endfunction
    function [CHG_W-1:0] min_chg;
        input [XW-1:0] a;
        input [CNT_W-1:0] b;
        min_chg = a < b ? a : b;
    endfunction

    // ---- the priority encoder: the lowest free block ----
    reg [PTR_W-1:0] lf;
    integer q;
    always @* begin
        lf = 0;
`ifdef LEFT_BUG_PRIORITY
        for (q = 0; q < NB; q = q + 1)
`else
        for (q = NB - 1; q >= 0; q = q - 1)
`endif
            if (free_map[q]) lf = q;
    end

    // ---- the register to bring a bitmap into: the first free one, else the LRU ----
    reg [RI_W-1:0]   victim;
    reg              vfree;
    reg [TICK_W-1:0] vbest;
    integer v;
    always @* begin
        victim = 0;
        vfree = 0;
        for (v = REGS - 1; v >= 0; v = v - 1)
            if (!r_own_v[v]) begin victim = v; vfree = 1; end
        if (!vfree) begin
            vbest = r_used[0];
            for (v = 1; v < REGS; v = v + 1)
`ifdef LEFT_BUG_LRU
                if (r_used[v] > vbest) begin victim = v; vbest = r_used[v]; end
`else
                if (r_used[v] < vbest) begin victim = v; vbest = r_used[v]; end
`endif
        end
    end

    // ---- decode: the accepted operation's inputs in the idle state, the latched ones after ----
    wire             idle = state == S_IDLE;
    wire [CONN_W-1:0] dc = idle ? in_conn : c;
    wire [IDX_W-1:0] dfront = idle ? in_front : front;
    wire [IDX_W-1:0] didx = idle ? in_index : idx;
    wire             hv = home_v[dc];
    wire [RI_W-1:0]  hr = home[dc];
    wire [IDX_W-1:0] rbase = r_base[hr];
    wire [PH_W-1:0]  rph = r_phys[hr];
    wire [SL_W-1:0]  roff = r_offb[hr];
    wire [XW-1:0]    rend = rbase + WIDTH;
    wire [WC_W:0]    rtop = win_top(nz[rph], roff);
    wire [WC_W:0]    rneed = rtop[WC_W] ? rtop[WC_W-1:0] + 1'b1 : 0;
    // An update in the pool: the list (its base set from RCV.NXT when empty), the blocks it
    // must grow by and the links to the packet's block.
    wire [CNT_W-1:0] pblocks = l_blocks[dc];
    wire             pempty = pblocks == 0;
    wire [IDX_W-1:0] pbase = pempty ? aligned(dfront) : l_base[dc];
    wire [XW-1:0]    pend = pbase + (pblocks << LOG_BB);
    wire             pbelow = !pempty && didx < l_base[dc];
    wire [XW-1:0]    pneed = didx < pend ? 0 : ((didx - pend) >> LOG_BB) + 1;
    wire             pnoroom = pneed > nfree;
    wire [XW-1:0]    plinks = blk(didx) - blk(pbase);
    // A bring-in's victim and what evicting it needs.
    wire [PH_W-1:0]  vph = r_phys[victim];
    wire [WC_W:0]    vtop = win_top(nz[vph], r_offb[victim]);
    wire [WC_W:0]    vneed = r_own_v[victim] && vtop[WC_W] ? vtop[WC_W-1:0] + 1'b1 : 0;
    // A take-run: its position (RCV.NXT, or a register's base above it), first from the inputs.
    wire [IDX_W-1:0] t_i = idle ? (hv && in_front < rbase ? rbase : in_front) : ti;
    // In a register: the block at t_i.
    wire [RI_W-1:0]  tr = idle ? hr : wr;
    wire [IDX_W-1:0] tbase = r_base[tr];
    wire [PH_W-1:0]  tph = r_phys[tr];
    wire [SL_W-1:0]  toff = r_offb[tr];
    wire             tin = {1'b0, t_i} < tbase + WIDTH;
    wire [SL_W-1:0]  tslot = slot_add(toff, blk(t_i) - blk(tbase));
    wire [BB-1:0]    tblock = nz[tph][tslot] ? ring_mem[tph * RB + tslot] : {BB{1'b0}};  // (no function: a
                                                   // continuous assignment sees only its arguments)
    wire [LOG_BB-1:0] tpos = t_i[LOG_BB-1:0];
    wire [LOG_BB:0]  tones = tin ? ones_from(tblock, tpos) : 0;
    wire [IDX_W-1:0] tnext = t_i + tones;
    wire             tmore = tin && tpos + tones == BB && {1'b0, tnext} < tbase + WIDTH;
    wire [IDX_W-1:0] tnbase = aligned(tnext) > tbase ? aligned(tnext) : tbase;
    wire [SL_W-1:0]  tnoff = slot_add(toff, blk(tnbase) - blk(tbase));
    // On a list: the head block, and the list's base and length before the operation.
    wire [PTR_W-1:0] hcur = idle ? l_start[in_conn] : cur;
    wire [BB-1:0]    hblock = bits_mem[hcur];
    wire [LOG_BB-1:0] hpos = t_i[LOG_BB-1:0];
    wire [LOG_BB:0]  hones = ones_from(hblock, hpos);
    wire [IDX_W-1:0] hbase0 = idle ? l_base[in_conn] : tb0;
    wire [CNT_W-1:0] hn0 = idle ? pblocks : tn0;
    // The operation's RCV.NXT.
    wire [IDX_W-1:0] tfront = idle ? in_front : front;
    // A bring-in: the register it takes, the list block read next and its place, the list's
    // length and base, the digest's block in it, the LRU clock, the charge, first from the
    // inputs.
    wire [RI_W-1:0]  bwr = idle ? victim : wr;
    wire [PTR_W-1:0] bcur = idle ? l_start[in_conn] : cur;
    wire [CNT_W-1:0] bj = idle ? {CNT_W{1'b0}} : bi_j;
    wire [CNT_W-1:0] bn = idle ? pblocks : bi_n;
    wire [IDX_W-1:0] bbase = idle ? pbase : bi_base;
    wire [XW-1:0]    bdj = !idle ? bi_dj : in_front >= pbase ? blk(in_front) - blk(pbase) : {XW{1'b1}};
    wire [TICK_W-1:0] bt = idle ? tick + 1'b1 : tick;
    wire [CHG_W-1:0] bcharge = idle ? pblocks + vneed : charge;
    wire [BB-1:0]    bdig = idle ? {BB{1'b0}} : dig;

    task finish;
        input [IDX_W-1:0] result;
        input [CHG_W-1:0] chg;
        input [BB-1:0] digest;
        begin
            out_valid <= 1;
            out_result <= result;
            out_charge <= chg;
            out_digest <= digest;
            state <= S_IDLE;
        end
    endtask

    // An update in the pool, decided from the connection's list (see the wires above).
    task pool_update;
        input [CHG_W-1:0] before;
        begin
            if (pbelow) finish(1, 0, 0);                 // below the bitmap: delivered already
            else if (pnoroom) finish(0, 0, 0);
            else begin
                if (pempty) l_base[dc] <= pbase;
                charge <= before + pneed + plinks + 1;
                if (pneed != 0) begin
                    cnt <= pneed;
                    state <= S_ALLOC;
                end else if (plinks == 0 || plinks == pblocks - 1) begin
                    // The first or the last block: at hand (start_ptr, end_ptr), set now.
                    nb = bits_mem[plinks == 0 ? l_start[dc] : l_end[dc]] | ({{BB-1{1'b0}}, 1'b1} << didx[LOG_BB-1:0]);
                    bits_mem[plinks == 0 ? l_start[dc] : l_end[dc]] <= nb;
                    finish(1, before + plinks + 1, nb);
                end else begin
                    cur <= l_start[dc];
                    cnt <= plinks;
                    state <= S_WALK;
                end
            end
        end
    endtask

    // The brought-in bitmap takes register wr, in the spare buffer; wr's buffer becomes spare.
    task install;
        begin
            r_owner[bwr] <= dc;
            r_own_v[bwr] <= 1;
            r_base[bwr] <= bbase;
            r_used[bwr] <= bt;
            r_phys[bwr] <= spare;
            r_offb[bwr] <= 0;
            spare <= r_phys[bwr];
            home[dc] <= bwr;
            home_v[dc] <= 1;
        end
    endtask

    // A bring-in reads one block of the list into the spare buffer and frees it; after the
    // last, the evicted register is written back, or the register taken at once if it was free.
    reg [BB-1:0] bnb;
    task bring_read;
        begin
            ring_mem[spare * RB + bj] <= bits_mem[bcur];
            nz[spare][bj] <= |bits_mem[bcur];
            bnb = bdj == bj && bdj < W ? bits_mem[bcur] : bdig;
            dig <= bnb;
            free_map[bcur] <= 1;
            nfree <= nfree + 1;
            cur <= next_mem[bcur];
            bi_j <= bj + 1;
            if (bj == bn - 1) begin
                l_blocks[dc] <= 0;
                if (r_own_v[bwr]) state <= S_WB;
                else begin
                    install;
                    finish(1, bcharge, bnb);
                end
            end else state <= S_BI_READ;
        end
    endtask

    integer i;
    reg [BB-1:0] nb;
    reg [IDX_W-1:0] nf;
    reg [SL_W-1:0] s;

    // take_run in a register, one block: the run's bits in it cleared; on to the next block
    // while the run reaches this one's end.
    task take_run_register;
        begin
            if (tin && tones != 0) begin
                nb = tblock & ~run_mask(tpos, tones);
                ring_mem[tph * RB + tslot] <= nb;
                nz[tph][tslot] <= |nb;
            end else nb = tblock;
            ti <= tnext;
            if (!tmore) begin
                r_base[tr] <= tnbase;
                r_offb[tr] <= tnoff;
                // The digest: the new front's block (the one just cleared, unless the run
                // reached its end).
                if (tin && tpos + tones != BB) finish(tnext - tfront, 1, nb);
                else finish(tnext - tfront, 1, ring_rd(tph, slot_add(toff, blk(tnext) - blk(tbase))));
            end else state <= S_TR_REG;
        end
    endtask

    // take_run on a list, its head block: freed if the front lies beyond it or the run passes
    // its end, else the run's bits in it cleared and done.
    task take_run_list;
        begin
            if ({1'b0, t_i} >= l_base[dc] + BB || hpos + hones == BB) begin
                free_map[hcur] <= 1;
                nfree <= nfree + 1;
                cur <= next_mem[hcur];
                l_start[dc] <= next_mem[hcur];
                l_base[dc] <= l_base[dc] + BB;
                l_blocks[dc] <= l_blocks[dc] - 1;
                nf = {1'b0, t_i} < l_base[dc] + BB ? t_i + hones : t_i;    // the new front
                ti <= nf;
                if (l_blocks[dc] == 1)
                    finish(nf - tfront, min_chg(blk(nf > hbase0 ? nf : hbase0) - blk(hbase0) + 1, hn0), 0);
                else state <= S_TR_POOL;
            end else begin
                nb = hblock & ~run_mask(hpos, hones);
                bits_mem[hcur] <= nb;
                finish(t_i + hones - tfront, min_chg(blk(t_i + hones) - blk(hbase0) + 1, hn0), nb);
            end
        end
    endtask
    always @(posedge clk) begin
        out_valid <= 0;
        if (rst) begin
            state <= S_IDLE;
            free_map <= {NB{1'b1}};
            nfree <= NB;
            tick <= 0;
            spare <= REGS;
            c <= 0;
            for (i = 0; i < CONNS; i = i + 1) begin
                l_blocks[i] <= 0; home_v[i] <= 0; home[i] <= 0; l_base[i] <= 0;
                l_start[i] <= 0; l_end[i] <= 0;
            end
            for (i = 0; i < REGS; i = i + 1) begin
                r_own_v[i] <= 0; r_owner[i] <= 0; r_base[i] <= 0; r_used[i] <= 0;
                r_phys[i] <= i; r_offb[i] <= 0;
            end
            for (i = 0; i < PHYS; i = i + 1) nz[i] <= 0;
        end else case (state)
        S_IDLE: if (in_valid) begin
            op <= in_op; c <= in_conn; front <= in_front; idx <= in_index;
            case (in_op)
            OP_UPDATE:
                if (hv && {1'b0, in_index} < rend) begin
                    // A hit: one clock.
                    tick <= tick + 1;
                    r_used[hr] <= tick + 1;
                    if (in_index >= rbase) begin
                        s = slot_add(roff, blk(in_index) - blk(rbase));
                        nb = ring_rd(rph, s) | ({{BB-1{1'b0}}, 1'b1} << in_index[LOG_BB-1:0]);
                        ring_mem[rph * RB + s] <= nb;
                        nz[rph][s] <= 1;
                        finish(1, 1, nb);
                    end else finish(1, 1, 0);
                end else if (hv) begin
                    // Beyond the register: it goes back to the pool first, if the pool has room.
                    if (rneed > nfree) finish(0, 0, 0);
                    else begin
                        wr <= hr; wneed <= rneed; wj <= 0; wb_for_bring <= 0;
                        charge <= rneed;
                        state <= S_WB;
                    end
                end else pool_update(0);
            OP_BRING: begin
                tick <= tick + 1;
                if (hv) begin
                    r_used[hr] <= tick + 1;
                    if (aligned(in_front) >= rbase && {1'b0, aligned(in_front)} < rend)
                        finish(1, 0, ring_rd(rph, slot_add(roff, blk(in_front) - blk(rbase))));
                    else finish(1, 0, 0);
                end else if (pblocks > W) finish(0, 0, 0);
                else if (vneed > nfree + pblocks) finish(0, 0, 0);
                else begin
                    wr <= victim; wneed <= vneed; wj <= 0; wb_for_bring <= 1;
                    bi_base <= pbase; bi_n <= pblocks; bi_j <= 0;
                    bi_dj <= in_front >= pbase ? blk(in_front) - blk(pbase) : {XW{1'b1}};
                    charge <= pblocks + vneed;
                    dig <= 0;
                    if (pblocks != 0) bring_read;
                    else if (r_own_v[victim]) state <= S_WB;
                    else begin
                        install;                // nothing to move: straight in
                        finish(1, 0, 0);
                    end
                end
            end
            OP_TAKE:
                if (hv) begin
                    wr <= hr;
                    take_run_register;
                end else if (pempty) finish(0, 0, 0);
                else if (in_front < l_base[in_conn]) finish(0, 1, 0);
                else begin
                    tb0 <= l_base[in_conn]; tn0 <= pblocks;
                    take_run_list;
                end
            OP_RELEASE: begin
                if (hv) begin
                    nz[rph] <= 0;
                    r_own_v[hr] <= 0;
                    home_v[in_conn] <= 0;
                end
                if (pempty) finish(0, 0, 0);
                else begin
                    cur <= l_start[in_conn];
                    state <= S_REL;
                end
            end
            endcase
        end

        // ---- update ----
        S_UPOOL: pool_update(charge);
        S_ALLOC: begin
            free_map[lf] <= 0;
            nfree <= nfree - 1;
            // A fresh block is cleared; the last one takes the packet's bit (it lies there).
            nb = cnt == 1 ? {{BB-1{1'b0}}, 1'b1} << idx[LOG_BB-1:0] : {BB{1'b0}};
            bits_mem[lf] <= nb;
            if (l_blocks[c] == 0) l_start[c] <= lf;
            else next_mem[l_end[c]] <= lf;
            l_end[c] <= lf;
            l_blocks[c] <= l_blocks[c] + 1;
            cnt <= cnt - 1;
            if (cnt == 1) finish(1, charge, nb);
        end
        S_WALK: begin
            // Follows Nxt_ptr; the last link reaches the packet's block, set at once.
            cur <= next_mem[cur];
            cnt <= cnt - 1;
            if (cnt == 1) begin
                nb = bits_mem[next_mem[cur]] | ({{BB-1{1'b0}}, 1'b1} << idx[LOG_BB-1:0]);
                bits_mem[next_mem[cur]] <= nb;
                finish(1, charge, nb);
            end
        end

        // ---- write register wr back to the pool as its owner's list, one block a clock ----
        S_WB: begin
            if (wneed != 0) begin
                s = slot_add(r_offb[wr], wj);
                bits_mem[lf] <= ring_rd(r_phys[wr], s);
                free_map[lf] <= 0;
                nfree <= nfree - 1;
                if (wj == 0) l_start[r_owner[wr]] <= lf;
                else next_mem[wprev] <= lf;
                wprev <= lf;
                wj <= wj + 1;
            end
            if (wneed == 0 || wj == wneed - 1) begin
                nz[r_phys[wr]] <= 0;
                r_own_v[wr] <= 0;
                home_v[r_owner[wr]] <= 0;
                l_base[r_owner[wr]] <= r_base[wr];
                l_blocks[r_owner[wr]] <= wneed;
                if (wneed != 0) l_end[r_owner[wr]] <= lf;
                if (wb_for_bring) begin
                    install;
                    finish(1, charge, dig);
                end else state <= S_UPOOL;
            end
        end

        // ---- bring_in: the list into the spare buffer, one block a clock, freeing it ----
        S_BI_READ: bring_read;

        // ---- take_run: one block a clock ----
        S_TR_REG: take_run_register;
        S_TR_POOL: take_run_list;

        // ---- release: the list's blocks back, one a clock ----
        S_REL: begin
            free_map[cur] <= 1;
            nfree <= nfree + 1;
            cur <= next_mem[cur];
            l_blocks[c] <= l_blocks[c] - 1;
            if (l_blocks[c] == 1) finish(0, 0, 0);
        end
        endcase
    end
endmodule
