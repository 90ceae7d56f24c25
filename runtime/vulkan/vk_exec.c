/*
 * vk_exec.c — running launches: batches, descriptor sets, barriers, timing.
 *
 * Batching. Launches are recorded into the command buffer of the current
 * batch and nothing is submitted until kcrt_finish, a transfer that needs a
 * buffer the batch uses, a timed launch, or MAX_DISPATCHES launches (so
 * that a program that never finishes still makes progress and bounded
 * memory). So 1000 launches between two kcrt_finish calls are one
 * vkQueueSubmit. There are VK_BATCHES batches in a ring: while one runs on
 * the device the next is recorded.
 *
 * Barriers. Within a batch, a dispatch that reads a buffer an earlier one
 * wrote, or writes a buffer an earlier one read or wrote (since the last
 * barrier), gets a compute-to-compute memory barrier first; independent
 * dispatches get none and may overlap. Each batch ends with a barrier that
 * makes its writes visible to later submissions (dispatches and copies) and
 * to the host.
 *
 * Pooling. Each batch owns its descriptor pools (more are made when they
 * run out) and resets them when its fence has been waited for; a small
 * cache in the batch gives a launch with the same layout and buffers as an
 * earlier one the same descriptor set, without vkUpdateDescriptorSets.
 * Spilled scalars, and the host's writes where memory is not mapped, are
 * copied into host-visible chunks the batch keeps (vk_arena).
 * Pipelines are made once per variant (vk_device.c).
 */
#include "vk_private.h"

#include <stdlib.h>
#include <string.h>

enum {
    MAX_DISPATCHES = 4096,
    POOL_SETS = 128,
    POOL_DESCRIPTORS = 1024,
    CHUNK_BYTES = 64 << 10,
};

static void arena_free(vk_dev *d, vk_arena *a);

/* ---- batches ---------------------------------------------------------------------------------- */

static void recycle(vk_dev *d, vk_batch *b)
{
    for (int i = 0; i < b->npools; i++)
        d->vkResetDescriptorPool(d->dev, b->pools[i], 0);
    b->cur_pool = 0;
    memset(b->memo, 0, sizeof(b->memo));
    b->args.cur = b->uploads.cur = 0;
    b->args.used = b->uploads.used = 0;
    b->args.given = b->uploads.given = 0;
    b->nwritten = b->nread = 0;
    b->dispatches = 0;
    b->bound = VK_NULL_HANDLE;
    d->vkResetCommandBuffer(b->cmd, 0);
    b->state = VK_FREE;
}

static kcrt_status wait_batch(vk_dev *d, vk_batch *b)
{
    d->stats.waits++;
    kcrt_status s =
        vk_check(d, d->vkWaitForFences(d->dev, 1, &b->fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
    if (s == KCRT_OK)
        s = vk_check(d, d->vkResetFences(d->dev, 1, &b->fence), "vkResetFences");
    recycle(d, b);
    return s;
}

/* Every write of the batch visible to what comes later on the queue and to the host. */
static void end_barrier(vk_dev *d, VkCommandBuffer cmd)
{
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                           VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT |
                                           VK_ACCESS_HOST_READ_BIT};
    d->vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT |
                                VK_PIPELINE_STAGE_HOST_BIT,
                            0, 1, &mb, 0, NULL, 0, NULL);
}

static kcrt_status submit(vk_dev *d)
{
    if (d->recording < 0)
        return KCRT_OK;
    vk_batch *b = &d->batches[d->recording];
    d->recording = -1;
    end_barrier(d, b->cmd);
    kcrt_status s = vk_check(d, d->vkEndCommandBuffer(b->cmd), "vkEndCommandBuffer");
    VkSubmitInfo si = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &b->cmd};
    if (s == KCRT_OK)
        s = vk_check(d, d->vkQueueSubmit(d->queue, 1, &si, b->fence), "vkQueueSubmit");
    if (s != KCRT_OK) {
        recycle(d, b); /* its launches are lost; the error says why */
        return s;
    }
    b->state = VK_SUBMITTED;
    d->stats.submissions++;
    return KCRT_OK;
}

kcrt_status vk_recording(vk_dev *d, vk_batch **out)
{
    if (d->recording >= 0) {
        *out = &d->batches[d->recording];
        return KCRT_OK;
    }
    int pick = -1;
    for (int i = 0; i < VK_BATCHES && pick < 0; i++)
        if (d->batches[i].state == VK_FREE)
            pick = i;
    if (pick < 0) { /* all in flight: wait for the oldest */
        for (int i = 0; i < VK_BATCHES; i++)
            if (pick < 0 || d->batches[i].serial < d->batches[pick].serial)
                pick = i;
        kcrt_status s = wait_batch(d, &d->batches[pick]);
        if (s != KCRT_OK)
            return s;
    }
    vk_batch *b = &d->batches[pick];
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    kcrt_status s = vk_check(d, d->vkBeginCommandBuffer(b->cmd, &bi), "vkBeginCommandBuffer");
    if (s != KCRT_OK)
        return s;
    b->state = VK_RECORDING;
    b->serial = ++d->serial;
    d->recording = pick;
    *out = b;
    return KCRT_OK;
}

kcrt_status vk_wait_serial(vk_dev *d, uint64_t serial)
{
    if (serial == 0)
        return KCRT_OK;
    kcrt_status s = KCRT_OK;
    if (d->recording >= 0 && d->batches[d->recording].serial <= serial)
        s = submit(d);
    for (int i = 0; i < VK_BATCHES; i++) {
        vk_batch *b = &d->batches[i];
        if (b->state == VK_SUBMITTED && b->serial <= serial) {
            kcrt_status w = wait_batch(d, b);
            s = s == KCRT_OK ? w : s;
        }
    }
    return s;
}

uint64_t vk_completed(vk_dev *d)
{
    uint64_t oldest_busy = d->serial + 1;
    for (int i = 0; i < VK_BATCHES; i++) {
        vk_batch *b = &d->batches[i];
        if (b->state == VK_SUBMITTED && d->vkGetFenceStatus(d->dev, b->fence) == VK_SUCCESS &&
            d->vkResetFences(d->dev, 1, &b->fence) == VK_SUCCESS)
            recycle(d, b);
        if (b->state != VK_FREE && b->serial < oldest_busy)
            oldest_busy = b->serial;
    }
    return oldest_busy - 1;
}

kcrt_status vk_finish(void *dev)
{
    vk_dev *d = dev;
    if (d->lost)
        return rt_fail(d->ctx, KCRT_ERROR_DEVICE_ERROR, "the Vulkan device was lost earlier");
    return vk_wait_serial(d, d->serial);
}

void vk_batches_free(vk_dev *d)
{
    for (int i = 0; i < VK_BATCHES; i++) {
        vk_batch *b = &d->batches[i];
        for (int j = 0; j < b->npools; j++)
            d->vkDestroyDescriptorPool(d->dev, b->pools[j], NULL);
        free(b->pools);
        arena_free(d, &b->args);
        arena_free(d, &b->uploads);
        if (b->fence)
            d->vkDestroyFence(d->dev, b->fence, NULL);
        memset(b, 0, sizeof(*b));
    }
}

/* ---- descriptor sets --------------------------------------------------------------------------- */

static kcrt_status new_pool(vk_dev *d, vk_batch *b)
{
    VkDescriptorPool *grown = realloc(b->pools, sizeof(VkDescriptorPool) * (size_t)(b->npools + 1));
    if (!grown)
        return rt_fail(d->ctx, KCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    b->pools = grown;
    VkDescriptorPoolSize sizes[2] = {
        {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .descriptorCount = POOL_DESCRIPTORS},
        {.type = VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, .descriptorCount = POOL_DESCRIPTORS},
    };
    VkDescriptorPoolCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                     .maxSets = POOL_SETS,
                                     .poolSizeCount = 2,
                                     .pPoolSizes = sizes};
    kcrt_status s = vk_check(d, d->vkCreateDescriptorPool(d->dev, &ci, NULL, &b->pools[b->npools]),
                             "vkCreateDescriptorPool");
    if (s == KCRT_OK) {
        b->npools++;
        d->stats.descriptor_pools_created++;
    }
    return s;
}

/* A set from the batch's pools, moving on to the next pool (made when
 * needed) when one is full. */
static kcrt_status allocate_set(vk_dev *d, vk_batch *b, VkDescriptorSetLayout layout, VkDescriptorSet *set)
{
    for (;;) {
        bool fresh = b->cur_pool == b->npools;
        if (fresh) {
            kcrt_status s = new_pool(d, b);
            if (s != KCRT_OK)
                return s;
        }
        VkDescriptorSetAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                          .descriptorPool = b->pools[b->cur_pool],
                                          .descriptorSetCount = 1,
                                          .pSetLayouts = &layout};
        VkResult r = d->vkAllocateDescriptorSets(d->dev, &ai, set);
        if (r == VK_SUCCESS) {
            d->stats.descriptor_sets_allocated++;
            return KCRT_OK;
        }
        if (fresh || (r != VK_ERROR_OUT_OF_POOL_MEMORY && r != VK_ERROR_FRAGMENTED_POOL))
            return vk_check(d, r, "vkAllocateDescriptorSets");
        b->cur_pool++; /* this pool is full: the next one */
    }
}

kcrt_status vk_arena_space(vk_dev *d, vk_arena *a, VkDeviceSize size, VkDeviceSize align, VkBufferUsageFlags usage,
                           vk_mem **chunk, VkDeviceSize *offset)
{
    VkDeviceSize at = (a->used + align - 1) / align * align;
    if (a->cur < a->nchunks && at + size > a->chunks[a->cur].size) {
        a->cur++;
        at = 0;
    }
    while (a->cur < a->nchunks && size > a->chunks[a->cur].size) /* a smaller one made for an earlier batch */
        a->cur++;
    if (a->cur == a->nchunks) {
        vk_mem *grown = realloc(a->chunks, sizeof(vk_mem) * (size_t)(a->nchunks + 1));
        if (!grown)
            return rt_fail(d->ctx, KCRT_ERROR_OUT_OF_MEMORY, "out of memory");
        a->chunks = grown;
        VkDeviceSize bytes = size > CHUNK_BYTES ? size : CHUNK_BYTES;
        kcrt_status s = vk_mem_create(d, bytes, usage, true, &a->chunks[a->nchunks]);
        if (s != KCRT_OK)
            return s;
        a->nchunks++;
        at = 0;
    }
    *chunk = &a->chunks[a->cur];
    *offset = at;
    a->used = at + size;
    a->given += size;
    return KCRT_OK;
}

static void arena_free(vk_dev *d, vk_arena *a)
{
    for (int j = 0; j < a->nchunks; j++)
        vk_mem_free(d, &a->chunks[j]);
    free(a->chunks);
    memset(a, 0, sizeof(*a));
}

static vk_memo *memo_slot(vk_batch *b, const vk_module *m, const VkBuffer *bufs)
{
    uint64_t h = (uint64_t)(uintptr_t)m->layout->set * 0x9e3779b97f4a7c15ull;
    for (uint32_t i = 0; i < m->nbuffers; i++)
        h = (h ^ (uint64_t)bufs[i]) * 0x100000001b3ull;
    return &b->memo[(h >> 20) % VK_MEMO];
}

static bool memo_hit(const vk_memo *e, const vk_module *m, const VkBuffer *bufs)
{
    return e->used && e->layout == m->layout->set && e->n == m->nbuffers &&
           memcmp(e->bufs, bufs, sizeof(VkBuffer) * m->nbuffers) == 0;
}

/* The view a texel binding reads (KC_TEXEL_READS), whose texels must
 * cover the buffer: a view stops at the device's maxTexelBufferElements. */
static kcrt_status texel_view(vk_dev *d, const vk_module *m, int param, vk_buf *vb, rt_texel t, VkBufferView *out)
{
    uint64_t texels = vb->bytes / rt_texel_bytes(t), limit = d->caps.limits.maxTexelBufferElements;
    if (texels > limit)
        return rt_fail(d->ctx, KCRT_ERROR_BAD_ARGUMENT,
                       "%s reads parameter %d as texels, and its buffer holds %llu of them, more than the "
                       "device's maxTexelBufferElements (%llu): use a variant without KC_TEXEL_READS",
                       m->name, param, (unsigned long long)texels, (unsigned long long)limit);
    return vk_texel_view(d, &vb->m, t, out);
}

static kcrt_status descriptor_set(vk_dev *d, vk_batch *b, const vk_module *m, const rt_launch_desc *l,
                                  VkDescriptorSet *set)
{
    VkBuffer bufs[256];
    VkDescriptorBufferInfo info[257];
    VkBufferView views[256];
    VkDeviceSize max_range = d->caps.limits.maxStorageBufferRange;
    for (int i = 0; i < m->nparams; i++)
        if (m->slots[i].is_binding) {
            vk_buf *vb = l->buffers[i];
            uint32_t k = m->slots[i].binding;
            bufs[k] = vb->m.buf;
            info[k] =
                (VkDescriptorBufferInfo){vb->m.buf, 0, vb->m.size <= max_range ? VK_WHOLE_SIZE : max_range};
            views[k] = VK_NULL_HANDLE;
            if (m->texel && m->texel[k] != RT_TEXEL_NONE) {
                kcrt_status s = texel_view(d, m, i, vb, m->texel[k], &views[k]);
                if (s != KCRT_OK)
                    return s;
            }
        }
    bool cacheable = !m->spilled && m->nbuffers <= VK_MEMO_BINDINGS;
    vk_memo *e = cacheable ? memo_slot(b, m, bufs) : NULL;
    if (e && memo_hit(e, m, bufs)) {
        *set = e->set;
        d->stats.descriptor_sets_reused++;
        return KCRT_OK;
    }
    kcrt_status s = allocate_set(d, b, m->layout->set, set);
    if (s != KCRT_OK)
        return s;
    uint32_t n = m->nbuffers;
    if (m->spilled) {
        vk_mem *chunk = NULL;
        VkDeviceSize at = 0;
        VkDeviceSize align = d->caps.limits.minStorageBufferOffsetAlignment;
        if ((s = vk_arena_space(d, &b->args, l->args_size, align ? align : 16, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                                &chunk, &at)) != KCRT_OK)
            return s;
        memcpy((char *)chunk->map + at, l->args, l->args_size);
        info[n++] = (VkDescriptorBufferInfo){chunk->buf, at, l->args_size};
    }
    VkWriteDescriptorSet w[257];
    for (uint32_t i = 0; i < n; i++) {
        bool texel = i < m->nbuffers && m->texel && m->texel[i] != RT_TEXEL_NONE;
        w[i] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                      .dstSet = *set,
                                      .dstBinding = i,
                                      .descriptorCount = 1,
                                      .descriptorType = texel ? VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER
                                                              : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                      .pBufferInfo = texel ? NULL : &info[i],
                                      .pTexelBufferView = texel ? &views[i] : NULL};
    }
    d->vkUpdateDescriptorSets(d->dev, n, w, 0, NULL);
    if (e) {
        e->used = true;
        e->layout = m->layout->set;
        e->n = m->nbuffers;
        memcpy(e->bufs, bufs, sizeof(VkBuffer) * m->nbuffers);
        e->set = *set;
    }
    return KCRT_OK;
}

/* ---- hazards ----------------------------------------------------------------------------------------- */

static bool listed(const VkBuffer *list, int n, VkBuffer b)
{
    for (int i = 0; i < n; i++)
        if (list[i] == b)
            return true;
    return false;
}

static void barrier(vk_dev *d, vk_batch *b)
{
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
    d->vkCmdPipelineBarrier(b->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
    b->nwritten = b->nread = 0;
    d->stats.barriers++;
}

/* A barrier before this dispatch if it depends on one since the last
 * barrier (read after write, write after read or write); then note what
 * it touches. */
static void order(vk_dev *d, vk_batch *b, const rt_launch_desc *l, bool always)
{
    bool need = always && b->dispatches > 0;
    int touched = 0;
    for (int i = 0; i < l->nparams && !need; i++) {
        if (!l->buffers[i])
            continue;
        VkBuffer vb = ((const vk_buf *)l->buffers[i])->m.buf;
        need = listed(b->written, b->nwritten, vb) || (l->writes[i] && listed(b->read, b->nread, vb));
        touched++;
    }
    if (need || b->nwritten + touched > VK_HAZARDS || b->nread + touched > VK_HAZARDS)
        barrier(d, b);
    for (int i = 0; i < l->nparams; i++) {
        if (!l->buffers[i])
            continue;
        VkBuffer vb = ((const vk_buf *)l->buffers[i])->m.buf;
        if (l->writes[i] && !listed(b->written, b->nwritten, vb))
            b->written[b->nwritten++] = vb;
        else if (!l->writes[i] && !listed(b->read, b->nread, vb))
            b->read[b->nread++] = vb;
    }
}

/* ---- dispatch
 * ---------------------------------------------------------------------------------------------- */

/* The zeros of buffers the launch is the first to use. */
static void zero_args(vk_dev *d, vk_batch *b, const rt_launch_desc *l)
{
    for (int i = 0; i < l->nparams; i++) {
        vk_buf *vb = l->buffers[i];
        if (vb && vb->zero_pending)
            vk_zero_in_batch(d, b, vb);
    }
}

static kcrt_status record(vk_dev *d, vk_batch *b, vk_module *m, const rt_launch_desc *l, bool serialise)
{
    VkPipeline pipe;
    kcrt_status s = vk_pipeline_for(d, m, l, &pipe);
    if (s != KCRT_OK)
        return s;
    zero_args(d, b, l);
    VkDescriptorSet set = VK_NULL_HANDLE;
    s = m->layout->nbindings ? descriptor_set(d, b, m, l, &set) : KCRT_OK;
    if (s != KCRT_OK)
        return s;
    order(d, b, l, serialise);
    if (b->bound != pipe) {
        d->vkCmdBindPipeline(b->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
        b->bound = pipe;
    }
    if (set)
        d->vkCmdBindDescriptorSets(b->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, m->layout->pipe, 0, 1, &set, 0,
                                   NULL);
    if (!m->spilled && l->args_size)
        d->vkCmdPushConstants(b->cmd, m->layout->pipe, VK_SHADER_STAGE_COMPUTE_BIT, 0, l->args_size, l->args);
    d->vkCmdDispatch(b->cmd, l->grid[0], l->grid[1], l->grid[2]);
    for (int i = 0; i < l->nparams; i++)
        if (l->buffers[i])
            ((vk_buf *)l->buffers[i])->last_serial = b->serial;
    b->dispatches++;
    d->stats.dispatches++;
    return KCRT_OK;
}

kcrt_status vk_launch(void *dev, void *module, const rt_launch_desc *l)
{
    vk_dev *d = dev;
    if (d->lost)
        return rt_fail(d->ctx, KCRT_ERROR_DEVICE_ERROR, "the Vulkan device was lost earlier");
    vk_batch *b;
    kcrt_status s = vk_recording(d, &b);
    if (s == KCRT_OK)
        s = record(d, b, module, l, false);
    if (s != KCRT_OK)
        return s;
    d->stats.launches++;
    if (b->dispatches >= MAX_DISPATCHES)
        return submit(d);
    return KCRT_OK;
}

/* ---- copies between buffers
 * ---------------------------------------------------------------------------------------------- */

/* Recorded into the batch between its dispatches: a barrier before (the
 * dispatches so far have written or read what it touches) and one after
 * (what comes later sees its bytes), each a full one, so the hazard lists
 * start again. */
kcrt_status vk_buffer_copy(void *dev, void *dst, size_t dst_offset, void *src, size_t src_offset, size_t bytes)
{
    vk_dev *d = dev;
    if (d->lost)
        return rt_fail(d->ctx, KCRT_ERROR_DEVICE_ERROR, "the Vulkan device was lost earlier");
    vk_batch *b;
    kcrt_status s = vk_recording(d, &b);
    if (s != KCRT_OK)
        return s;
    vk_buf *to = dst, *from = src;
    if (to->zero_pending)
        vk_zero_in_batch(d, b, to);
    if (from->zero_pending)
        vk_zero_in_batch(d, b, from);
    VkMemoryBarrier before = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                              .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                              .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT};
    d->vkCmdPipelineBarrier(b->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                            VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &before, 0, NULL, 0, NULL);
    VkBufferCopy region = {src_offset, dst_offset, bytes};
    d->vkCmdCopyBuffer(b->cmd, from->m.buf, to->m.buf, 1, &region);
    VkMemoryBarrier after = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                             .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                             .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                              VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT |
                                              VK_ACCESS_HOST_READ_BIT};
    d->vkCmdPipelineBarrier(b->cmd, VK_PIPELINE_STAGE_TRANSFER_BIT,
                            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT |
                                VK_PIPELINE_STAGE_HOST_BIT,
                            0, 1, &after, 0, NULL, 0, NULL);
    b->nwritten = b->nread = 0;
    to->last_serial = from->last_serial = b->serial;
    d->stats.barriers += 2;
    return KCRT_OK;
}

/* ---- timing
 * ------------------------------------------------------------------------------------------------- */

static kcrt_status query_pool(vk_dev *d, uint32_t n)
{
    if (d->nqueries >= n)
        return KCRT_OK;
    if (d->queries)
        d->vkDestroyQueryPool(d->dev, d->queries, NULL);
    d->queries = VK_NULL_HANDLE;
    d->nqueries = 0;
    uint32_t size = 64;
    while (size < n)
        size *= 2;
    VkQueryPoolCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                .queryCount = size};
    kcrt_status s = vk_check(d, d->vkCreateQueryPool(d->dev, &ci, NULL, &d->queries), "vkCreateQueryPool");
    if (s == KCRT_OK)
        d->nqueries = size;
    return s;
}

/* Cold timing: the flush buffer written after the previous launch ends
 * and before the next begins (the start stamp then waits for all commands,
 * the write among them). */
static void record_flush(vk_dev *d, vk_batch *b, void *flush, size_t bytes, uint32_t value)
{
    VkMemoryBarrier before = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                              .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT, /* the previous fill */
                              .dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT};
    d->vkCmdPipelineBarrier(b->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                            VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &before, 0, NULL, 0, NULL);
    d->vkCmdFillBuffer(b->cmd, ((vk_buf *)flush)->m.buf, 0, (VkDeviceSize)bytes, value);
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
    d->vkCmdPipelineBarrier(b->cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb,
                            0, NULL, 0, NULL);
    d->stats.barriers += 2;
}

/* How many launches one pair of timestamps brackets. lavapipe takes
 * a timestamp on its rasteriser threads and the barrier after it wakes
 * them, which costs the bracketed launch ~25 us of thread hand-offs on a
 * 2-core machine (a one-workgroup launch: 52 us bracketed alone, 28 us in
 * brackets of 10, 28 us a launch back to back with no timestamps, 2 us an
 * empty bracket; docs/benchmarks.md). A launch between other launches, as
 * in a model, does not pay it; eight launches a bracket leave 3 us of it
 * each. A GPU's timestamps cost nothing: one launch a bracket. */
enum { CPU_LAUNCHES_PER_STAMP = 8 };

static int launches_per_stamp(const vk_dev *d, int repeats, bool cold)
{
    if (cold || d->ctx->info.type != KCRT_DEVICE_CPU)
        return 1; /* cold: the flush is written between every two launches, outside the stamps */
    int brackets = (repeats + CPU_LAUNCHES_PER_STAMP - 1) / CPU_LAUNCHES_PER_STAMP;
    return (repeats + brackets - 1) / brackets; /* even brackets: 10 launches are 5 + 5, not 8 + 2 */
}

static kcrt_status record_timed(vk_dev *d, vk_batch *b, vk_module *m, const rt_launch_desc *l, int repeats,
                                int per_stamp, void *flush, size_t flush_bytes)
{
    int brackets = (repeats + per_stamp - 1) / per_stamp;
    d->vkCmdResetQueryPool(b->cmd, d->queries, 0, (uint32_t)brackets * 2);
    for (int r = 0; r < brackets; r++) {
        if (flush) /* a different value each time: nothing can skip the write */
            record_flush(d, b, flush, flush_bytes, 0x9e3779b9u * (uint32_t)(r + 1));
        /* the start stamp waits for the previous dispatch (and the flush),
         * so each interval holds its own launches */
        d->vkCmdWriteTimestamp(b->cmd, flush ? VK_PIPELINE_STAGE_ALL_COMMANDS_BIT : VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                               d->queries, (uint32_t)r * 2);
        for (int i = r * per_stamp; i < repeats && i < (r + 1) * per_stamp; i++) {
            kcrt_status s = record(d, b, m, l, true);
            if (s != KCRT_OK)
                return s;
        }
        d->vkCmdWriteTimestamp(b->cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, d->queries, (uint32_t)r * 2 + 1);
    }
    return KCRT_OK;
}

/* ns_each[i]: the time of launch i's bracket over the launches in it */
static void spread_brackets(const vk_dev *d, const uint64_t *t, int repeats, int per_stamp, double *ns_each)
{
    const kcrt_device_info *info = &d->ctx->info;
    uint64_t mask = info->timestamp_valid_bits >= 64 ? ~0ull : (1ull << info->timestamp_valid_bits) - 1;
    for (int r = 0; r * per_stamp < repeats; r++) {
        int lo = r * per_stamp, hi = lo + per_stamp < repeats ? lo + per_stamp : repeats;
        /* a counter that wrapped still subtracts right */
        double ns = (double)((t[2 * r + 1] - t[2 * r]) & mask) * info->timestamp_period_ns;
        for (int i = lo; i < hi; i++)
            ns_each[i] = ns / (hi - lo);
    }
}

kcrt_status vk_time(void *dev, void *module, const rt_launch_desc *l, int repeats, void *flush, size_t flush_bytes,
                    double *ns_each)
{
    vk_dev *d = dev;
    const kcrt_device_info *info = &d->ctx->info;
    if (!info->timestamp_valid_bits)
        return rt_fail(d->ctx, KCRT_ERROR_UNSUPPORTED, "'%s' has no timestamps on its compute queue",
                       info->name);
    int per_stamp = launches_per_stamp(d, repeats, flush != NULL);
    uint32_t stamps = (uint32_t)((repeats + per_stamp - 1) / per_stamp) * 2;
    kcrt_status s = vk_finish(d); /* earlier launches are not part of the timing */
    vk_batch *b;
    if (s == KCRT_OK)
        s = query_pool(d, stamps);
    if (s == KCRT_OK)
        s = vk_recording(d, &b);
    if (s == KCRT_OK)
        zero_args(d, b, l); /* not between the timestamps */
    if (s == KCRT_OK)
        s = record_timed(d, b, module, l, repeats, per_stamp, flush, flush_bytes);
    if (s != KCRT_OK) {
        submit(d); /* do not leave a half-recorded batch */
        vk_finish(d);
        return s;
    }
    d->stats.launches += (uint64_t)repeats;
    if ((s = vk_finish(d)) != KCRT_OK)
        return s;
    uint64_t *t = calloc(stamps, sizeof(uint64_t));
    if (!t)
        return rt_fail(d->ctx, KCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    s = vk_check(d,
                 d->vkGetQueryPoolResults(d->dev, d->queries, 0, stamps, sizeof(uint64_t) * stamps, t,
                                          sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
                 "vkGetQueryPoolResults");
    if (s == KCRT_OK)
        spread_brackets(d, t, repeats, per_stamp, ns_each);
    free(t);
    return s;
}
