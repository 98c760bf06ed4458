// Package v1 is the CronJob API of kubebuilder's tutorial, typed again for a CRD comparison.
// +kubebuilder:object:generate=false
// +groupName=batch.tutorial.kubebuilder.io
package v1

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type CronJobSpec struct {
	// When to run, in cron syntax.
	// +kubebuilder:validation:MinLength=0
	Schedule string `json:"schedule"`
	// How late, in seconds, a missed run may still start.
	// +kubebuilder:validation:Minimum=0
	// +optional
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty"`
	// What to do when a run is due while the previous one is still going.
	// +kubebuilder:default=Allow
	// +optional
	ConcurrencyPolicy ConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`
	// Whether later runs are held back; runs already started go on.
	// +optional
	Suspend *bool `json:"suspend,omitempty"`
	// The Job each run creates.
	JobTemplate batchv1.JobTemplateSpec `json:"jobTemplate"`
	// How many finished Jobs to keep.
	// +kubebuilder:validation:Minimum=0
	// +optional
	SuccessfulJobsHistoryLimit *int32 `json:"successfulJobsHistoryLimit,omitempty"`
	// How many failed Jobs to keep.
	// +kubebuilder:validation:Minimum=0
	// +optional
	FailedJobsHistoryLimit *int32 `json:"failedJobsHistoryLimit,omitempty"`
}

// How runs of one CronJob may overlap.
// +kubebuilder:validation:Enum=Allow;Forbid;Replace
type ConcurrencyPolicy string

type CronJobStatus struct {
	// The Jobs running now.
	// +optional
	Active []corev1.ObjectReference `json:"active,omitempty"`
	// When a Job was last started.
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`
	// The latest observations, one per condition type.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
type CronJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   CronJobSpec   `json:"spec,omitempty"`
	Status CronJobStatus `json:"status,omitempty"`
}
